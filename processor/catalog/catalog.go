// Package catalog registers the Delta tables cdc2delta maintains in a
// metastore (Unity Catalog, AWS Glue, a Hive Metastore) so that engines find
// them by name. The Delta log stays the only source of truth for data and
// offsets: an entry holds a name, a location and a copy of the schema, and is
// repaired from the log whenever they differ.
package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Sentinels callers branch on. Implementations wrap them with what was asked.
var (
	// ErrNotFound: no entry under the name (Lookup), or no such schema or
	// database to create it in.
	ErrNotFound = errors.New("catalog: not found")
	// ErrExists: Create found the name taken.
	ErrExists = errors.New("catalog: name taken")
	// ErrUnavailable: the catalog could not be reached or did not answer in
	// time; the call may be retried.
	ErrUnavailable = errors.New("catalog: unavailable")
	// ErrDenied: the catalog refused the credentials (401/403).
	ErrDenied = errors.New("catalog: access denied")
)

// Name is a three-part table name. Catalogs with two levels (Glue, Hive)
// leave Catalog empty.
type Name struct {
	Catalog, Schema, Table string
}

func (n Name) String() string {
	if n.Catalog == "" {
		return n.Schema + "." + n.Table
	}
	return n.Catalog + "." + n.Schema + "." + n.Table
}

// Entry is what a catalog records about one external Delta table.
type Entry struct {
	Name Name
	// Location is the table's root as engines address it (s3://…,
	// abfss://…, gs://…, file:///…).
	Location string
	// Schema and PartitionColumns are copies of the table's current
	// metadata; Description is its comment.
	Schema           *deltalog.StructType
	PartitionColumns []string
	Description      string
	// Properties are extra table parameters to record (owner tags,
	// "cdc2delta.role"); implementations add their own required ones.
	Properties map[string]string
	// Format is the table format the entry declares, as Lookup found it
	// ("delta", or what another writer registered: "iceberg", "parquet";
	// "" when the catalog does not say). Create and Update ignore it: they
	// always register a Delta table.
	Format string
}

// FormatDelta is Entry.Format of a Delta table.
const FormatDelta = "delta"

// Catalog is one metastore. Implementations are safe for concurrent use and
// honour ctx's deadline on every call.
type Catalog interface {
	// Lookup returns the entry under name, or an error wrapping ErrNotFound.
	Lookup(ctx context.Context, name Name) (Entry, error)
	// Create registers e, or fails wrapping ErrExists when the name is taken.
	Create(ctx context.Context, e Entry) error
	// Update replaces the entry under e.Name with e.
	Update(ctx context.Context, e Entry) error
}

// ConflictError stops one table's registration: the name holds an entry
// that is not this table's (another location, or not a Delta table).
type ConflictError struct {
	Name     Name
	Location string // the location already registered
	Want     string // this table's location
	// Format is set when the entry is not a Delta table: the format it
	// declares ("iceberg", "parquet", or "unknown").
	Format string
}

func (e *ConflictError) Error() string {
	if e.Format != "" {
		return fmt.Sprintf("catalog: %s is registered as a %s table at %s, not as a Delta table: drop that entry or register this table (%s) under another name",
			e.Name, e.Format, e.Location, e.Want)
	}
	return fmt.Sprintf("catalog: %s is registered at %s, not at this table's %s: drop that entry or register this table under another name",
		e.Name, e.Location, e.Want)
}
