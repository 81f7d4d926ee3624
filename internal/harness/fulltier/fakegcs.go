package fulltier

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

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

// FakeGCS is a private fake-gcs-server of one test, which the test may freeze
// (SIGSTOP) and thaw: the shared emulator of the full tier must never be
// frozen, since every other test of the run uses it.
type FakeGCS struct {
	// Endpoint is "http://127.0.0.1:PORT"; no credentials.
	Endpoint    string
	t           testing.TB
	pid         int
	script, dir string
}

// StartFakeGCS starts fake-gcs-server with scripts/setup/fakegcs.sh on a free
// loopback port (the script waits, with a deadline, until it accepts
// connections). It is thawed and stopped when the test ends.
func StartFakeGCS(t testing.TB) *FakeGCS {
	t.Helper()
	script := filepath.Join(filepath.Dir(ScriptsDir(t)), "setup", "fakegcs.sh")
	dir := t.TempDir()
	out, err := exec.CommandContext(t.Context(), "bash", script, "start", dir).Output()
	if err != nil {
		t.Fatalf("fulltier: %s start: %v (log %s)", script, err, filepath.Join(dir, "fakegcs.log"))
	}
	pidText, err := os.ReadFile(filepath.Join(dir, "fakegcs.pid"))
	if err != nil {
		t.Fatalf("fulltier: fake-gcs-server pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatalf("fulltier: fake-gcs-server pid %q: %v", pidText, err)
	}
	f := &FakeGCS{Endpoint: strings.TrimSpace(string(out)), t: t, pid: pid, script: script, dir: dir}
	t.Cleanup(f.Stop)
	return f
}

// Stop thaws and stops the server; its port then refuses connections. Stopping
// twice is harmless.
func (f *FakeGCS) Stop() {
	if _, err := os.Stat(filepath.Join(f.dir, "fakegcs.pid")); err != nil {
		return // stopped already: the pid may be another process's by now
	}
	_ = syscall.Kill(f.pid, syscall.SIGCONT)
	if out, err := exec.Command("bash", f.script, "stop", f.dir).CombinedOutput(); err != nil {
		f.t.Errorf("fulltier: %s stop: %v\n%s", f.script, err, out)
	}
}

// CreateBucket creates a bucket on the server.
func (f *FakeGCS) CreateBucket(name string) {
	f.t.Helper()
	createGCSBucket(f.t, f.Endpoint, name)
}

// Freeze stops the server with SIGSTOP: the kernel still accepts
// connections and buffers requests, and nothing answers.
func (f *FakeGCS) Freeze() { f.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server with SIGCONT.
func (f *FakeGCS) Thaw() { f.signal(syscall.SIGCONT) }

func (f *FakeGCS) signal(sig syscall.Signal) {
	f.t.Helper()
	if err := syscall.Kill(f.pid, sig); err != nil {
		f.t.Fatalf("fulltier: signalling fake-gcs-server: %v", err)
	}
}
