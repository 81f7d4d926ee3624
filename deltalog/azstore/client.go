package azstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/cdc2delta/cdc2delta/deltalog/storewatch"
	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// Client is a Blob service client of one account that any number of stores
// share: one credential (and token cache), one connection pool.
type Client struct {
	svc      *service.Client
	timeout  time.Duration
	endpoint string // the service URL, for errors and Root
}

// NewClient builds the client from opts (Container and Prefix are not used).
// It does not contact Azure.
func NewClient(ctx context.Context, opts Options) (*Client, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	retries := int32(opts.MaxRetries)
	if retries == 0 {
		retries = -1 // the SDK's 0 means its default, 3
	}
	copts := &azblob.ClientOptions{ClientOptions: policy.ClientOptions{
		Transport: watchedTransport{next: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}},
		Retry: policy.RetryOptions{
			MaxRetries:    retries,
			MaxRetryDelay: storewatch.MaxRetryDelay(opts.RequestTimeout),
		},
	}}
	c := opts.Credentials
	var (
		client *azblob.Client
		err    error
	)
	switch {
	case c.AccountKey != "":
		var key *azblob.SharedKeyCredential
		key, err = azblob.NewSharedKeyCredential(opts.Account, c.AccountKey)
		if err != nil {
			// The SDK's message quotes nothing secret, but say which setting.
			return nil, fmt.Errorf("azstore: the account key is not valid base64")
		}
		client, err = azblob.NewClientWithSharedKeyCredential(opts.Endpoint+"/", key, copts)
	case c.SASToken != "":
		client, err = azblob.NewClientWithNoCredential(opts.Endpoint+"/?"+strings.TrimPrefix(c.SASToken, "?"), copts)
	case c.ClientSecret != "":
		var cred *azidentity.ClientSecretCredential
		cred, err = azidentity.NewClientSecretCredential(c.TenantID, c.ClientID, c.ClientSecret,
			&azidentity.ClientSecretCredentialOptions{ClientOptions: policy.ClientOptions{Transport: copts.Transport}})
		if err != nil {
			return nil, fmt.Errorf("azstore: service principal credential: %w", err)
		}
		client, err = azblob.NewClient(opts.Endpoint+"/", cred, copts)
	default:
		var cred *azidentity.DefaultAzureCredential
		cred, err = azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("azstore: default Azure credential chain: %w", err)
		}
		client, err = azblob.NewClient(opts.Endpoint+"/", cred, copts)
	}
	if err != nil {
		return nil, fmt.Errorf("azstore: building the Blob client of %s: %w", urlcred.Redact(opts.Endpoint), err)
	}
	return &Client{svc: client.ServiceClient(), timeout: opts.RequestTimeout, endpoint: opts.Endpoint}, nil
}

// Store is the store of the table at container/prefix (slashes around
// prefix are trimmed), through c.
func (c *Client) Store(container, prefix string) (*Store, error) {
	if msg := checkContainer(container); msg != "" {
		return nil, fmt.Errorf("azstore: container %q %s", container, msg)
	}
	s := &Store{client: c.svc.NewContainerClient(container), container: container,
		timeout: c.timeout, endpoint: c.endpoint}
	if p := strings.Trim(prefix, "/"); p != "" {
		s.root = p + "/"
	}
	s.rootURL = rootURL(c.endpoint, container, strings.TrimSuffix(s.root, "/"))
	return s, nil
}

// rootURL is the table URL a Store reports: the abfss:// form Spark and
// delta-rs write into absolute paths when the endpoint is Azure's, else
// az://container/prefix.
func rootURL(endpoint, container, prefix string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Scheme == "https" && strings.Contains(u.Host, ".blob.") {
		return "abfss://" + container + "@" + strings.Replace(u.Host, ".blob.", ".dfs.", 1) + "/" + prefix
	}
	return "az://" + container + "/" + prefix
}

// New builds a client from opts, as NewClient does, and the store on
// opts.Container and opts.Prefix through it.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.Container == "" {
		return nil, errors.New("azstore: Options.Container is empty")
	}
	c, err := NewClient(ctx, opts)
	if err != nil {
		return nil, err
	}
	return c.Store(opts.Container, opts.Prefix)
}
