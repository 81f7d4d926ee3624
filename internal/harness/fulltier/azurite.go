package fulltier

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/google/uuid"
)

// EnvAzureEndpoint holds the Blob endpoint of the full tier's Azurite,
// "http://127.0.0.1:PORT/devstoreaccount1" (the account AzuriteAccount,
// with the key AzuriteKey).
const EnvAzureEndpoint = "CDC2DELTA_AZURE_ENDPOINT"

// AzuriteAccount and AzuriteKey are Azurite's well-known development
// account, published in Azurite's documentation: not a secret.
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// AzureEndpoint returns the Blob endpoint of the full tier's Azurite.
func AzureEndpoint(t testing.TB) string {
	t.Helper()
	return env(t, EnvAzureEndpoint)
}

// NewContainer creates an empty container with a unique name on the Azurite
// at endpoint and returns its name. It is deleted when the test ends.
func NewContainer(t testing.TB, endpoint string) string {
	t.Helper()
	key, err := azblob.NewSharedKeyCredential(AzuriteAccount, AzuriteKey)
	if err != nil {
		t.Fatalf("fulltier: %v", err)
	}
	client, err := azblob.NewClientWithSharedKeyCredential(endpoint+"/", key, nil)
	if err != nil {
		t.Fatalf("fulltier: Azurite client: %v", err)
	}
	name := "t-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:24]
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := client.CreateContainer(ctx, name, nil); err != nil {
		t.Fatalf("fulltier: creating container %s on %s: %v", name, endpoint, err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = client.DeleteContainer(ctx, name, nil) // a private Azurite may be gone already
	})
	return name
}

// Azurite is a private Azurite of one test, which the test may freeze
// (SIGSTOP) and thaw: the shared one of the full tier must never be frozen.
type Azurite struct {
	// Endpoint is "http://127.0.0.1:PORT/devstoreaccount1".
	Endpoint string
	t        testing.TB
	pid      int
}

// StartAzurite starts an Azurite with scripts/setup/azurite.sh on a free
// loopback port (the script waits, with a deadline, until it accepts
// connections). It is thawed and stopped when the test ends.
func StartAzurite(t testing.TB) *Azurite {
	t.Helper()
	script := filepath.Join(ScriptsDir(t), "..", "setup", "azurite.sh")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, "start", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fulltier: %s start: %v", script, err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "azurite.pid"))
	pid, perr := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || perr != nil {
		t.Fatalf("fulltier: reading Azurite's pid in %s: %v %v", dir, err, perr)
	}
	a := &Azurite{Endpoint: strings.TrimSpace(string(out)), t: t, pid: pid}
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGCONT)
		stop := exec.Command("bash", script, "stop", dir)
		stop.Stderr = os.Stderr
		_ = stop.Run() // kills it after 10s if TERM does not
	})
	return a
}

// Freeze stops the server with SIGSTOP: the kernel still accepts
// connections and buffers requests, and nothing answers.
func (a *Azurite) Freeze() { a.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server with SIGCONT.
func (a *Azurite) Thaw() { a.signal(syscall.SIGCONT) }

func (a *Azurite) signal(sig syscall.Signal) {
	a.t.Helper()
	if err := syscall.Kill(a.pid, sig); err != nil {
		a.t.Fatalf("fulltier: signalling Azurite: %v", err)
	}
}
