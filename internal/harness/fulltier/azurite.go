package fulltier

import (
	"context"
	"strings"
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
// (SIGSTOP), thaw and stop: the shared one of the full tier must never be
// frozen.
type Azurite struct {
	// Endpoint is "http://127.0.0.1:PORT/devstoreaccount1".
	Endpoint string
	*scriptServer
}

// StartAzurite starts an Azurite with scripts/setup/azurite.sh on a free
// loopback port. It is thawed and stopped when the test ends.
func StartAzurite(t testing.TB) *Azurite {
	t.Helper()
	s, out := startScript(t, "Azurite", "azurite.sh", "azurite.pid", 2*time.Minute)
	return &Azurite{Endpoint: out, scriptServer: s}
}
