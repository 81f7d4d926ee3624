package runopts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/azstore"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
)

// StoreOpener opens a table path: s3:// URLs with the configured S3 options, Azure
// URLs with the Azure ones, gs:// URLs with the GCS ones, anything else as a local
// directory. It is the opener of every command that runs the configuration;
// getenv supplies the Azure settings the configuration leaves empty.
func StoreOpener(st config.Storage, getenv func(string) string) func(context.Context, string) (deltalog.Store, error) {
	s3 := st.S3
	azure := AzureOpener(st.Azure, getenv)
	openGCS := gcsOpener(st.GCS)
	// Every table on S3 shares one client: one load of the AWS
	// configuration, one credential cache, one connection pool.
	var (
		mu     sync.Mutex
		client *s3store.Client
	)
	return func(ctx context.Context, p string) (deltalog.Store, error) {
		switch {
		case !strings.Contains(p, "://"):
			return localstore.New(localstore.Options{Dir: p})
		case strings.HasPrefix(p, "gs://"):
			return openGCS(ctx, p)
		case azstore.IsURL(p):
			return azure(ctx, p)
		}
		o, err := s3store.ParseURL(p)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if client == nil {
			o.Endpoint, o.Region, o.UsePathStyle = s3.Endpoint, s3.Region, s3.PathStyle
			o.RequestTimeout = time.Duration(s3.RequestTimeout)
			c, err := s3store.NewClient(ctx, o)
			if errors.Is(err, s3store.ErrNoRegion) {
				return nil, fmt.Errorf("%w: set storage.s3.region or AWS_REGION", err)
			}
			if err != nil {
				return nil, err
			}
			client = c
		}
		return client.Store(o.Bucket, o.Prefix)
	}
}

// AzureOpener opens Azure table URLs with the storage.azure settings, each
// empty one taken from the environment the Azure tools use. The tables of one
// account and endpoint share a client: one credential, one connection pool.
func AzureOpener(a config.Azure, getenv func(string) string) func(context.Context, string) (deltalog.Store, error) {
	or := func(v, env string) string {
		if v == "" {
			return getenv(env)
		}
		return v
	}
	base := azstore.Options{
		Account:  or(a.Account, "AZURE_STORAGE_ACCOUNT_NAME"),
		Endpoint: or(a.Endpoint, "CDC2DELTA_AZURE_ENDPOINT"),
		Credentials: azstore.Credentials{
			AccountKey:   or(a.AccountKey.Reveal(), "AZURE_STORAGE_ACCOUNT_KEY"),
			SASToken:     or(a.SASToken.Reveal(), "AZURE_STORAGE_SAS_TOKEN"),
			TenantID:     a.TenantID,
			ClientID:     a.ClientID,
			ClientSecret: a.ClientSecret.Reveal(),
		},
		RequestTimeout: time.Duration(a.RequestTimeout),
	}
	var (
		mu      sync.Mutex
		clients = map[[2]string]*azstore.Client{}
	)
	return func(ctx context.Context, p string) (deltalog.Store, error) {
		o, err := azstore.ParseURL(p)
		if err != nil {
			return nil, err
		}
		opts := base
		opts.Container, opts.Prefix = o.Container, o.Prefix
		if o.Account != "" {
			opts.Account = o.Account
		}
		if opts.Endpoint == "" { // an override (Azurite) wins over the URL's host
			opts.Endpoint = o.Endpoint
		}
		key := [2]string{opts.Account, opts.Endpoint}
		mu.Lock()
		defer mu.Unlock()
		c := clients[key]
		if c == nil {
			if c, err = azstore.NewClient(ctx, opts); err != nil {
				return nil, err
			}
			clients[key] = c
		}
		return c.Store(opts.Container, opts.Prefix)
	}
}

// gcsOpener opens gs:// table paths with the configured GCS options. Every table shares
// one client: one credential cache, one connection pool.
func gcsOpener(g config.GCS) func(context.Context, string) (deltalog.Store, error) {
	var (
		mu     sync.Mutex
		client *gcsstore.Client
	)
	return func(ctx context.Context, p string) (deltalog.Store, error) {
		o, err := gcsstore.ParseURL(p)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if client == nil {
			o.Endpoint, o.CredentialsFile = g.Endpoint, g.CredentialsFile
			o.RequestTimeout = time.Duration(g.RequestTimeout)
			c, err := gcsstore.NewClient(ctx, o)
			if err != nil {
				return nil, err
			}
			client = c
		}
		return client.Store(o.Bucket, o.Prefix)
	}
}
