//go:build integration

package azstore_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/azstore"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// containerSAS signs a container SAS token with the development account's
// key, as `az storage container generate-sas` does, over http too
// (Azurite serves http).
func containerSAS(t *testing.T, container string, perms sas.ContainerPermissions) string {
	t.Helper()
	key, err := azblob.NewSharedKeyCredential(fulltier.AzuriteAccount, fulltier.AzuriteKey)
	require.NoError(t, err)
	q, err := sas.BlobSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		ExpiryTime:    time.Now().Add(time.Hour).UTC(),
		Permissions:   perms.String(),
		ContainerName: container,
	}.SignWithSharedKey(key)
	require.NoError(t, err)
	return q.Encode()
}

// TestAzuriteSASConformance runs the store conformance suite with a
// container SAS token as the only credential.
func TestAzuriteSASConformance(t *testing.T) {
	endpoint := fulltier.AzureEndpoint(t)
	container := fulltier.NewContainer(t, endpoint)
	token := containerSAS(t, container, sas.ContainerPermissions{Read: true, Add: true, Create: true, Write: true, Delete: true, List: true})
	storetest.Run(t, func(t *testing.T) deltalog.Store {
		return azuriteStore(t, endpoint, container, "tables/"+uuid.NewString(), func(o *azstore.Options) {
			o.Credentials = azstore.Credentials{SASToken: token}
		})
	})
}

// TestAzuriteReadOnlySAS: a SAS token without write permission reads what
// the full token wrote, and a commit is refused as a permanent 403 (not
// retried as unavailable, not taken for a lost race) whose message never
// holds the token.
func TestAzuriteReadOnlySAS(t *testing.T) {
	endpoint := fulltier.AzureEndpoint(t)
	container := fulltier.NewContainer(t, endpoint)
	ctx := t.Context()
	writer := azuriteStore(t, endpoint, container, "t")
	require.NoError(t, writer.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("v0")))

	token := containerSAS(t, container, sas.ContainerPermissions{Read: true, List: true})
	reader := azuriteStore(t, endpoint, container, "t", func(o *azstore.Options) {
		o.Credentials = azstore.Credentials{SASToken: token}
	})
	rc, err := reader.Get(ctx, "_delta_log/00000000000000000000.json")
	require.NoError(t, err, "the read-only token reads")
	got, err := io.ReadAll(rc)
	require.NoError(t, errors.Join(err, rc.Close()))
	require.Equal(t, "v0", string(got))

	err = reader.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("v1"))
	require.Error(t, err)
	require.NotErrorIs(t, err, deltalog.ErrUnavailable)
	require.NotErrorIs(t, err, deltalog.ErrExist)
	var se *azstore.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 403, se.Status)
	require.NotContains(t, err.Error(), token)
	require.NotContains(t, err.Error(), "sig=")
}
