package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/azstore"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
)

// parseStoreURL checks an object store table URL with the parser of its store.
func parseStoreURL(raw string) error {
	if azstore.IsURL(raw) {
		_, err := azstore.ParseURL(raw)
		return err
	}
	if strings.HasPrefix(raw, "gs://") {
		_, err := gcsstore.ParseURL(raw)
		return err
	}
	_, err := s3store.ParseURL(raw)
	return err
}

// azureOpener opens Azure table URLs with the storage.azure settings, each
// empty one taken from the environment the Azure tools use. The tables of one
// account and endpoint share a client: one credential, one connection pool.
func azureOpener(a config.Azure, getenv func(string) string) func(context.Context, string) (deltalog.Store, error) {
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
