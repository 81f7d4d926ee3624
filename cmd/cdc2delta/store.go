package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/cmd/internal/runopts"
	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/azstore"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
	"github.com/cdc2delta/cdc2delta/internal/urlcred"
)

// storeFlags are the storage options shared by the table commands. Their defaults come
// from the environment so scripts can set them once.
type storeFlags struct {
	endpoint    string
	region      string
	pathStyle   bool
	gcsEndpoint string
	gcsKeyFile  string
	// getenv supplies the Azure settings (AZURE_STORAGE_ACCOUNT_NAME, ...,
	// CDC2DELTA_AZURE_ENDPOINT), as for a configuration that names none.
	getenv func(string) string
	// open is the run path's opener over these flags, made on first use
	// (after the flags are parsed); the tables of one command share its clients.
	open func(context.Context, string) (deltalog.Store, error)
}

func addStoreFlags(fs *flag.FlagSet, e *env) *storeFlags {
	sf := &storeFlags{getenv: e.getenv}
	ps, _ := strconv.ParseBool(e.getenv("CDC2DELTA_S3_PATH_STYLE")) // unset or junk: false
	fs.StringVar(&sf.endpoint, "s3-endpoint", e.getenv("CDC2DELTA_S3_ENDPOINT"),
		"S3-compatible endpoint URL for s3:// tables (env CDC2DELTA_S3_ENDPOINT; default AWS)")
	fs.StringVar(&sf.region, "s3-region", e.getenv("AWS_REGION"), "S3 region (env AWS_REGION)")
	fs.BoolVar(&sf.pathStyle, "s3-path-style", ps, "path-style S3 addressing, needed by most S3-compatible servers (env CDC2DELTA_S3_PATH_STYLE)")
	fs.StringVar(&sf.gcsEndpoint, "gcs-endpoint", e.getenv("CDC2DELTA_GCS_ENDPOINT"),
		"GCS emulator URL for gs:// tables, used without credentials (env CDC2DELTA_GCS_ENDPOINT, else STORAGE_EMULATOR_HOST; default GCS)")
	fs.StringVar(&sf.gcsKeyFile, "gcs-credentials-file", "",
		"service-account key file for gs:// tables; empty: the application default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud, the metadata server)")
	return sf
}

// openTable opens the table at a local directory, s3:// URL, Azure URL or gs:// URL.
func (sf *storeFlags) openTable(ctx context.Context, location string, opts ...deltalog.Option) (*deltalog.Table, error) {
	store, err := sf.openStore(ctx, location)
	if err != nil {
		return nil, err
	}
	return deltalog.Open(ctx, store, opts...)
}

// openReader opens a table for a command that only reads it: files named by absolute
// URI (a shallow clone's) are read from their own store, opened with these flags.
func (sf *storeFlags) openReader(ctx context.Context, location string, opts ...deltalog.Option) (*deltalog.Table, error) {
	return sf.openTable(ctx, location, append(opts, deltalog.ResolveAbsolutePaths(sf.openRoot))...)
}

// openRoot is the deltalog.Opener of openReader: "/" is the local file system, other
// roots are bucket or container URLs.
func (sf *storeFlags) openRoot(ctx context.Context, root string) (deltalog.Store, error) {
	if root == "/" {
		return localstore.New(localstore.Options{Dir: "/"})
	}
	return sf.openStore(ctx, root)
}

// openStore opens the store rooted at a local directory, s3:// URL, Azure URL or gs://
// URL with the opener `run` uses. Credentials for S3 come from the standard AWS chain,
// for Azure from the environment.
func (sf *storeFlags) openStore(ctx context.Context, location string) (deltalog.Store, error) {
	if strings.Contains(location, "://") {
		if err := parseStoreURL(location); err != nil {
			return nil, usagef("table %q: %v", urlcred.Redact(location), err)
		}
	} else {
		switch st, err := os.Stat(location); {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("no table at %s (the directory does not exist)", location)
		case err == nil && !st.IsDir():
			return nil, fmt.Errorf("%s is a file, not a Delta table (a table is a directory with a _delta_log)", location)
		}
	}
	if sf.open == nil {
		sf.open = runopts.StoreOpener(config.Storage{
			S3:  config.S3{Endpoint: sf.endpoint, Region: sf.region, PathStyle: sf.pathStyle},
			GCS: config.GCS{Endpoint: sf.gcsEndpoint, CredentialsFile: sf.gcsKeyFile},
		}, sf.getenv)
	}
	store, err := sf.open(ctx, location)
	if errors.Is(err, s3store.ErrNoRegion) {
		return nil, usagef("opening %s: no AWS region: pass --s3-region or set AWS_REGION (in a config file: storage.s3.region)",
			urlcred.Redact(location))
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", urlcred.Redact(location), err)
	}
	return store, nil
}

// openLatest opens the table at location and loads its latest snapshot.
func (sf *storeFlags) openLatest(ctx context.Context, location string) (*deltalog.Table, *deltalog.Snapshot, error) {
	t, err := sf.openTable(ctx, location)
	if err != nil {
		return nil, nil, err
	}
	snap, err := latest(ctx, t, location)
	return t, snap, err
}

// openLatestReader is openLatest for a command that only reads the table (openReader).
func (sf *storeFlags) openLatestReader(ctx context.Context, location string) (*deltalog.Table, *deltalog.Snapshot, error) {
	t, err := sf.openReader(ctx, location)
	if err != nil {
		return nil, nil, err
	}
	snap, err := latest(ctx, t, location)
	return t, snap, err
}

// latest loads the latest snapshot with an error that says what is wrong.
func latest(ctx context.Context, t *deltalog.Table, location string) (*deltalog.Snapshot, error) {
	snap, err := t.Snapshot(ctx)
	if errors.Is(err, deltalog.ErrNotExist) {
		return nil, notATable(location)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", location, err)
	}
	return snap, nil
}

// notATable says that location, which exists, holds no Delta table.
func notATable(location string) error {
	if !strings.Contains(location, "://") {
		if _, err := os.Stat(filepath.Join(location, "_delta_log")); err == nil {
			return fmt.Errorf("%s is not a Delta table (no commits in _delta_log)", location)
		}
	}
	return fmt.Errorf("%s is not a Delta table (no _delta_log)", location)
}

// oneTable checks that exactly one table argument was given.
func oneTable(args []string) (string, error) {
	if len(args) != 1 {
		return "", usagef("expected one table (a directory, s3://bucket/prefix or gs://bucket/prefix), got %d arguments", len(args))
	}
	return args[0], nil
}

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
