package azstore

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// DefaultMaxRetries is the retry bound used when Options.MaxRetries is zero.
const DefaultMaxRetries = 5

// Options configures a Client, and with Container and Prefix a Store.
type Options struct {
	// Account is the storage account name. Required unless Endpoint names it
	// (an Azurite endpoint ends in /ACCOUNT).
	Account string
	// Container is the container (OneLake: the workspace) holding the table.
	Container string
	// Prefix is the blob name prefix of the table root, without leading or
	// trailing slashes (they are trimmed). Empty means the container root.
	Prefix string
	// Endpoint is the Blob service URL. Empty means
	// https://ACCOUNT.blob.core.windows.net; Azurite's is
	// http://127.0.0.1:PORT/devstoreaccount1.
	Endpoint string
	// Credentials chooses how requests authenticate.
	Credentials Credentials
	// MaxRetries bounds the SDK's retries of one request. Zero means
	// DefaultMaxRetries; negative disables retries.
	MaxRetries int
	// RequestTimeout is how long one operation (with the SDK's retries) may go
	// without progress: an attempt starting, a byte sent or received. Past it
	// the operation fails with a *TimeoutError matching
	// deltalog.ErrUnavailable. Zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// Credentials are the ways to authenticate, tried in this order: an account
// key, a SAS token, a service principal's client secret (TenantID, ClientID
// and ClientSecret), and, when none is set, the SDK's default credential
// chain (environment, workload identity, managed identity, Azure CLI). They
// never print: String says only which kind is set.
type Credentials struct {
	AccountKey   string
	SASToken     string // with or without the leading "?"
	TenantID     string
	ClientID     string
	ClientSecret string
}

// Kind names the credential that Credentials select.
func (c Credentials) Kind() string {
	switch {
	case c.AccountKey != "":
		return "account key"
	case c.SASToken != "":
		return "SAS token"
	case c.ClientSecret != "":
		return "client secret"
	}
	return "default credential chain"
}

// String names the kind of credential and nothing secret.
func (c Credentials) String() string { return c.Kind() }

// GoString is String, for %#v.
func (c Credentials) GoString() string { return c.Kind() }

// validate checks and completes the options a Client uses.
func (o *Options) validate() error {
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return fmt.Errorf("azstore: endpoint %q is not an http:// or https:// URL", urlcred.Redact(o.Endpoint))
		case u.User != nil:
			return fmt.Errorf("azstore: endpoint %q carries credentials; they come from storage.azure.*", urlcred.Redact(o.Endpoint))
		case u.RawQuery != "":
			return fmt.Errorf("azstore: endpoint %q has a query; a SAS token goes in storage.azure.sas_token", u.Scheme+"://"+u.Host+u.Path)
		}
		o.Endpoint = strings.TrimSuffix(o.Endpoint, "/")
		if o.Account == "" {
			o.Account = accountOf(u)
		}
	}
	if o.Account == "" {
		return fmt.Errorf("azstore: no storage account: set storage.azure.account or AZURE_STORAGE_ACCOUNT_NAME, or use an abfss:// or https:// table URL that names it")
	}
	if o.Endpoint == "" {
		o.Endpoint = "https://" + o.Account + ".blob.core.windows.net"
	}
	if c := o.Credentials; c.AccountKey == "" && c.SASToken == "" && c.ClientSecret != "" && (c.TenantID == "" || c.ClientID == "") {
		return fmt.Errorf("azstore: a client secret needs a tenant id and a client id")
	}
	o.Prefix = strings.Trim(o.Prefix, "/")
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	switch {
	case o.RequestTimeout == 0:
		o.RequestTimeout = DefaultRequestTimeout
	case o.RequestTimeout < 0:
		return fmt.Errorf("azstore: negative request timeout %s", o.RequestTimeout)
	}
	return nil
}

// accountOf returns the account an endpoint names: the first label of an
// Azure host, or the first path segment of an emulator's
// (http://127.0.0.1:10000/devstoreaccount1).
func accountOf(u *url.URL) string {
	if seg, _, _ := strings.Cut(strings.Trim(u.Path, "/"), "/"); seg != "" {
		return seg
	}
	if h := blobHost(u.Host); h != "" {
		a, _, _ := strings.Cut(h, ".")
		return a
	}
	return ""
}
