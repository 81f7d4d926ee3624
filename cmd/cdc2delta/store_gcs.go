package main

import (
	"context"
	"sync"
	"time"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
)

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
