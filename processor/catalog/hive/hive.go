// Package hive registers Delta tables in an Apache Hive Metastore over
// Thrift (the binary protocol on a plain socket, the metastore's default
// transport without SASL), as Spark with delta-spark registers an external
// Delta table, so that Spark SQL with that metastore, and the engines that
// read Spark's entries, find the table by name.
//
// It speaks the few calls it needs (get_table_req, create_table,
// alter_table, get_database, create_database) with hand-written structs on
// the Thrift library's protocol API, rather than the generated code of the
// whole metastore IDL. Each call opens its own connection, bounded by the
// caller's deadline: registration is rare (a table's creation, a change of
// its schema), and a fresh connection cannot be left half-read by a call
// that timed out.
package hive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// Options configure a Catalog.
type Options struct {
	// URIs are the metastore's addresses, "thrift://host:port" (what
	// hive.metastore.uris lists) or "host:port"; each call uses the first
	// that accepts a connection. Required.
	URIs []string
	// Owner is recorded as the owner of the tables Create registers.
	// Default "cdc2delta".
	Owner string
	// CallTimeout bounds a call whose context has no deadline. Default 30s.
	CallTimeout time.Duration
	// DialTimeout bounds connecting to one address. Default 10s, and never
	// past the call's deadline.
	DialTimeout time.Duration
	// Logger receives debug lines per call. Default: discard.
	Logger *slog.Logger
}

// Catalog is a Hive Metastore. It is safe for concurrent use.
type Catalog struct {
	opts   Options
	addrs  []string
	dialer net.Dialer
	seq    atomic.Int32
	log    *slog.Logger
}

var _ catalog.Catalog = (*Catalog)(nil)

// New returns a client of the metastore at opts.URIs. It does not connect.
func New(opts Options) (*Catalog, error) {
	if len(opts.URIs) == 0 {
		return nil, errors.New("hive: no metastore URIs")
	}
	c := &Catalog{opts: opts, log: opts.Logger}
	for _, u := range opts.URIs {
		addr, err := parseURI(u)
		if err != nil {
			return nil, err
		}
		c.addrs = append(c.addrs, addr)
	}
	if c.opts.Owner == "" {
		c.opts.Owner = "cdc2delta"
	}
	if c.opts.CallTimeout <= 0 {
		c.opts.CallTimeout = 30 * time.Second
	}
	if c.opts.DialTimeout <= 0 {
		c.opts.DialTimeout = 10 * time.Second
	}
	c.dialer.Timeout = c.opts.DialTimeout
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With("component", "catalog", "catalog", "hive")
	return c, nil
}

// parseURI turns "thrift://host:port" or "host:port" into "host:port".
func parseURI(s string) (string, error) {
	addr := strings.TrimSpace(s)
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil {
			return "", fmt.Errorf("hive: metastore URI %q: %w", s, err)
		}
		if u.Scheme != "thrift" {
			return "", fmt.Errorf("hive: metastore URI %q: scheme %q, want thrift://host:port", s, u.Scheme)
		}
		addr = u.Host
	}
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return "", fmt.Errorf("hive: metastore URI %q: want thrift://host:port", s)
	}
	return addr, nil
}

// Lookup returns the entry under name. Hive matches names without regard
// to case; the entry carries name as given. The location is the one Spark
// reads (the storage parameter "path", else the table's location); a table
// that is not a Delta table keeps its "spark.sql.sources.provider" (if any)
// in Properties.
func (c *Catalog) Lookup(ctx context.Context, name catalog.Name) (catalog.Entry, error) {
	t, err := c.getTable(ctx, name)
	if err != nil {
		return catalog.Entry{}, fmt.Errorf("looking up %s: %w", name, err)
	}
	e, err := entryOf(name, &t)
	if err != nil {
		return catalog.Entry{}, fmt.Errorf("looking up %s: %w", name, err)
	}
	return e, nil
}

// Create registers e as an external Delta table. It fails wrapping
// catalog.ErrExists when the name is taken, and catalog.ErrNotFound when
// the database does not exist (CreateDatabase makes one). A Create that
// fails with catalog.ErrUnavailable may still take effect: a metastore that
// stalled reads the request once it runs again. Lookup tells.
func (c *Catalog) Create(ctx context.Context, e catalog.Entry) error {
	t, err := tableOf(e, c.opts.Owner, time.Now())
	if err != nil {
		return fmt.Errorf("registering %s: %w", e.Name, err)
	}
	c.log.DebugContext(ctx, "create_table", "table", e.Name.String(), "location", e.Location)
	err = c.call(ctx, createTable, func(w *enc) { w.structField(1, func() { w.table(&t) }) }, nil)
	var merr *MetastoreError
	if errors.As(err, &merr) && merr.Exception == "InvalidObjectException" {
		// Hive 3 says "There is no database" with InvalidObjectException,
		// which it also raises for a malformed table: ask.
		if ok, derr := c.DatabaseExists(ctx, e.Name.Schema); derr == nil && !ok {
			return fmt.Errorf("registering %s: %w: no database %s (%w)", e.Name, catalog.ErrNotFound, e.Name.Schema, err)
		}
	}
	if err != nil {
		return fmt.Errorf("registering %s: %w", e.Name, err)
	}
	return nil
}

// Update replaces the entry under e.Name with e, keeping its owner and
// creation time. It fails wrapping catalog.ErrNotFound when there is no
// entry under the name.
func (c *Catalog) Update(ctx context.Context, e catalog.Entry) error {
	old, err := c.getTable(ctx, e.Name)
	if err != nil {
		return fmt.Errorf("updating %s: %w", e.Name, err)
	}
	t, err := tableOf(e, old.Owner, time.Unix(int64(old.CreateTime), 0))
	if err != nil {
		return fmt.Errorf("updating %s: %w", e.Name, err)
	}
	c.log.DebugContext(ctx, "alter_table", "table", e.Name.String(), "location", e.Location)
	err = c.call(ctx, alterTable, func(w *enc) {
		w.str(1, e.Name.Schema)
		w.str(2, e.Name.Table)
		w.structField(3, func() { w.table(&t) })
	}, nil)
	if err != nil {
		return fmt.Errorf("updating %s: %w", e.Name, err)
	}
	return nil
}

// CreateDatabase creates the database name, its managed tables under
// location (the metastore's warehouse when empty). It fails wrapping
// catalog.ErrExists when the database exists.
func (c *Catalog) CreateDatabase(ctx context.Context, name, location string) error {
	d := database{Name: name, LocationURI: location, Parameters: map[string]string{}}
	err := c.call(ctx, createDatabase, func(w *enc) { w.structField(1, func() { w.database(&d) }) }, nil)
	if err != nil {
		return fmt.Errorf("creating database %s: %w", name, err)
	}
	return nil
}

// DatabaseExists says whether the database name exists.
func (c *Catalog) DatabaseExists(ctx context.Context, name string) (bool, error) {
	var d database
	err := c.call(ctx, getDatabase, func(w *enc) { w.str(1, name) },
		func(ctx context.Context, p thrift.TProtocol) error { return readDatabase(ctx, p, &d) })
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("looking up database %s: %w", name, err)
	}
	return true, nil
}

func (c *Catalog) getTable(ctx context.Context, name catalog.Name) (table, error) {
	var t table
	c.log.DebugContext(ctx, "get_table_req", "table", name.String())
	err := c.call(ctx, getTableReq, func(w *enc) {
		w.structField(1, func() { // GetTableRequest
			w.str(1, name.Schema)
			w.str(2, name.Table)
		})
	}, func(ctx context.Context, p thrift.TProtocol) error { return readGetTableResult(ctx, p, &t) })
	return t, err
}
