package fulltier

import (
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/google/uuid"
	"google.golang.org/api/option"
)

// EnvGCSEndpoint is the URL of the full tier's GCS emulator (fake-gcs-server),
// "http://127.0.0.1:PORT"; scripts/setup/fakegcs.sh starts it.
const EnvGCSEndpoint = "CDC2DELTA_GCS_ENDPOINT"

// GCSEndpoint returns the URL of the full tier's GCS emulator. It takes no
// credentials.
func GCSEndpoint(t testing.TB) string {
	t.Helper()
	return env(t, EnvGCSEndpoint)
}

// NewGCSBucket creates an empty bucket with a unique name on the full tier's
// GCS emulator and returns its name. The emulator keeps its objects in memory
// and dies with the run, so the bucket is not deleted.
func NewGCSBucket(t testing.TB) string {
	t.Helper()
	return createGCSBucket(t, GCSEndpoint(t), "t-"+strings.ReplaceAll(uuid.NewString(), "-", "")[:24])
}

func createGCSBucket(t testing.TB, endpoint, name string) string {
	t.Helper()
	c, err := storage.NewClient(t.Context(), option.WithoutAuthentication(), option.WithEndpoint(endpoint+"/storage/v1/"))
	if err != nil {
		t.Fatalf("fulltier: GCS client for %s: %v", endpoint, err)
	}
	defer c.Close()
	if err := c.Bucket(name).Create(t.Context(), "test", nil); err != nil {
		t.Fatalf("fulltier: creating bucket %s on %s: %v", name, endpoint, err)
	}
	return name
}

// FakeGCS is a private fake-gcs-server of one test, which the test may
// freeze (SIGSTOP), thaw and stop: the shared emulator of the full tier must
// never be frozen.
type FakeGCS struct {
	// Endpoint is "http://127.0.0.1:PORT"; no credentials.
	Endpoint string
	*scriptServer
}

// StartFakeGCS starts fake-gcs-server with scripts/setup/fakegcs.sh on a
// free loopback port. It is thawed and stopped when the test ends.
func StartFakeGCS(t testing.TB) *FakeGCS {
	t.Helper()
	s, out := startScript(t, "fake-gcs-server", "fakegcs.sh", "fakegcs.pid", 2*time.Minute)
	return &FakeGCS{Endpoint: out, scriptServer: s}
}

// CreateBucket creates a bucket on the server.
func (f *FakeGCS) CreateBucket(name string) {
	f.t.Helper()
	createGCSBucket(f.t, f.Endpoint, name)
}
