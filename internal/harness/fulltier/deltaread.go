package fulltier

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// Engine names a Delta reader of scripts/py/deltaread.py.
type Engine string

// The engines of scripts/py/deltaread.py.
const (
	// DeltaRS reads with delta-rs (the deltalake Python package).
	DeltaRS Engine = "deltars"
	// DuckDB reads with DuckDB's delta extension (delta_scan). It reports no
	// nullability, no txn versions and no protocol, and cannot time travel
	// by timestamp.
	DuckDB Engine = "duckdb"
	// Spark reads with Spark local[2] and delta-spark. It cannot read S3
	// here (see docs/TESTING.md).
	Spark Engine = "spark"
	// Polars reads with polars (read_delta, scan_delta); local tables only.
	// It is not among Engines: its nested values are not canonical yet.
	Polars Engine = "polars"
)

// Engines returns every engine, for tests that compare all of them.
func Engines() []Engine { return []Engine{DeltaRS, DuckDB, Spark} }

// ReadOptions selects what ReadTable reads. The zero value reads every row
// of the latest version.
type ReadOptions struct {
	// Version time-travels to a table version when not nil.
	Version *int64
	// Timestamp time-travels to the version current at that time when not zero.
	Timestamp time.Time
	// Filter is an SQL predicate the engine applies (and may prune files with).
	Filter string
	// AppIDs are the txn application ids whose versions the result reports.
	AppIDs []string
	// Predicate is a filter each API spells its own way (a pyarrow dataset
	// filter, a polars expression, SQL); nil reads every row.
	Predicate *Predicate
	// RowsOnly skips what an engine reports beside the rows (Spark replays the
	// log once more for the version, txns and protocol).
	RowsOnly bool
}

// Predicate compares a column with a literal, as in id > 3.
type Predicate struct {
	Column string
	// Op is one of > >= < <= =.
	Op    string
	Value any
}

// MarshalJSON writes deltaread.py's [column, op, value].
func (p Predicate) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{p.Column, p.Op, p.Value})
}

// Request is one read for Read: an engine, a table path (local or s3://)
// and what to read.
type Request struct {
	Engine Engine
	// API selects the engine's call (deltaread.py's "api"): "" for the
	// engine's default, or e.g. "to_pandas", "scan_delta", "version_as_of".
	API  string
	Path string
	// Code is the Python of API "recipe", run in deltaread.py's process once
	// the engine has started; the result's one row holds its output.
	Code string
	// Statements are the Spark SQL of API "sql", run in order ({table} stands
	// for delta.`Path`); the result holds the last one's rows.
	Statements []string
	ReadOptions
}

// Table is what one engine read from a Delta table, in canonical form (see
// scripts/py/deltaread.py): rows with the same content compare equal across
// engines with require.Equal.
type Table struct {
	Engine Engine
	API    string
	// EngineVersion names the packages that read, e.g. "deltalake 1.6.6".
	EngineVersion string
	Path          string
	// Version is the snapshot version read, when the engine reports it.
	Version *int64
	// Schema lists the columns in table order.
	Schema []Field
	// Rows are sorted, keyed by column name. Integers and floats are
	// json.Number, decimals exact strings with their scale, timestamps
	// ISO-8601 ("...T12:00:00.000000Z" for timestamp, no zone for
	// timestamp_ntz), binary hex, nested values JSON objects and lists.
	Rows []map[string]any
	// Txn maps each requested app id to its txn version, nil when the table
	// has none for it. Empty for engines that do not report txns.
	Txn map[string]*int64
	// Protocol is the table's protocol when the engine reports it.
	Protocol *Protocol
	// Err is the engine's error message; ReadTable fails the test on it,
	// Read leaves it to the caller.
	Err string
	// Seconds is the read's wall time in deltaread.py.
	Seconds float64
}

// Field is a column of a Table's schema.
type Field struct {
	Name string
	// Type is a Delta type string ("long", "decimal(10,2)", "timestamp_ntz")
	// or, for nested columns, the Delta schema JSON object without metadata.
	Type any
	// Nullable is nil when the engine does not say (DuckDB).
	Nullable *bool
}

// Protocol is a Delta protocol action as an engine reports it.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures"`
	WriterFeatures   []string `json:"writerFeatures"`
}

// Columns returns the column names in table order.
func (tb Table) Columns() []string {
	names := make([]string, len(tb.Schema))
	for i, f := range tb.Schema {
		names[i] = f.Name
	}
	return names
}

// Types returns the column types in table order with nullability removed
// (also inside nested types), for comparing engines of which some do not
// report nullability.
func (tb Table) Types() []any {
	types := make([]any, len(tb.Schema))
	for i, f := range tb.Schema {
		types[i] = withoutNullability(f.Type)
	}
	return types
}

func withoutNullability(typ any) any {
	m, ok := typ.(map[string]any)
	if !ok {
		return typ
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch k {
		case "nullable", "containsNull", "valueContainsNull":
			continue
		case "fields":
			fields, _ := v.([]any)
			stripped := make([]any, len(fields))
			for i, f := range fields {
				stripped[i] = withoutNullability(f)
			}
			out[k] = stripped
		default:
			out[k] = withoutNullability(v)
		}
	}
	return out
}

// ReadTable reads the Delta table at path with one engine, failing the test
// if the engine reports an error.
func ReadTable(t testing.TB, engine Engine, path string, opts ReadOptions) Table {
	t.Helper()
	tb := Read(t, Request{Engine: engine, Path: path, ReadOptions: opts})[0]
	if tb.Err != "" {
		t.Fatalf("fulltier: %s reading %s: %s", engine, path, tb.Err)
	}
	return tb
}

// Read runs all requests in one deltaread.py process, so that Spark starts
// once, and returns one Table per request, in order. An engine's failure is
// reported in Table.Err; a failure of the script itself fails the test.
func Read(t testing.TB, reqs ...Request) []Table {
	t.Helper()
	return read(t, nil, reqs)
}

// ReadHive is Read with Spark's session catalog in the Hive Metastore at
// uri ("thrift://127.0.0.1:PORT", see HiveMetastore): Spark SQL statements
// (API "sql") and recipes then address tables by name, as in
// SELECT * FROM db.t.
func ReadHive(t testing.TB, uri string, reqs ...Request) []Table {
	t.Helper()
	return read(t, []string{"--hive-metastore", uri}, reqs)
}

func read(t testing.TB, flags []string, reqs []Request) []Table {
	t.Helper()
	in := make([]wireRequest, len(reqs))
	for i, r := range reqs {
		in[i] = wireRequest{
			Engine:     r.Engine,
			API:        r.API,
			Path:       r.Path,
			Version:    r.Version,
			Filter:     r.Filter,
			Predicate:  r.Predicate,
			AppIDs:     r.AppIDs,
			RowsOnly:   r.RowsOnly,
			Code:       r.Code,
			Statements: r.Statements,
		}
		if !r.Timestamp.IsZero() {
			in[i].Timestamp = r.Timestamp.UTC().Format(time.RFC3339Nano)
		}
	}
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("fulltier: encoding deltaread requests: %v", err)
	}
	args := append([]string{ScriptsDir(t) + "/deltaread.py"}, flags...)
	out := runPython(t, body, append(args, "-")...)
	tables, err := decodeTables(out)
	if err != nil {
		t.Fatalf("fulltier: %v\noutput:\n%s", err, tail(out, 4000))
	}
	if len(tables) != len(reqs) {
		t.Fatalf("fulltier: deltaread answered %d results for %d requests", len(tables), len(reqs))
	}
	return tables
}

type wireRequest struct {
	Engine     Engine     `json:"engine"`
	API        string     `json:"api,omitempty"`
	Predicate  *Predicate `json:"predicate,omitempty"`
	Path       string     `json:"path"`
	Version    *int64     `json:"version,omitempty"`
	Timestamp  string     `json:"timestamp,omitempty"`
	Filter     string     `json:"filter,omitempty"`
	AppIDs     []string   `json:"app_ids,omitempty"`
	RowsOnly   bool       `json:"rows_only,omitempty"`
	Code       string     `json:"code,omitempty"`
	Statements []string   `json:"statements,omitempty"`
}

type wireResult struct {
	Engine        Engine  `json:"engine"`
	API           *string `json:"api"`
	EngineVersion *string `json:"engine_version"`
	Path          string  `json:"path"`
	Version       *int64  `json:"version"`
	Schema        []struct {
		Name     string `json:"name"`
		Type     any    `json:"type"`
		Nullable *bool  `json:"nullable"`
	} `json:"schema"`
	Rows     []map[string]any  `json:"rows"`
	NumRows  int               `json:"num_rows"`
	Txn      map[string]*int64 `json:"txn"`
	Protocol *Protocol         `json:"protocol"`
	Seconds  *json.Number      `json:"seconds"`
	Error    *string           `json:"error"`
}

// decodeTables parses deltaread.py's output, keeping numbers exact.
func decodeTables(out string) ([]Table, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(out)))
	dec.UseNumber()
	var res []wireResult
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("decoding deltaread output: %w", err)
	}
	tables := make([]Table, len(res))
	for i, r := range res {
		tb := Table{
			Engine:   r.Engine,
			Path:     r.Path,
			Version:  r.Version,
			Rows:     r.Rows,
			Txn:      r.Txn,
			Protocol: r.Protocol,
		}
		if tb.Rows == nil {
			tb.Rows = []map[string]any{}
		}
		if len(tb.Rows) != r.NumRows {
			return nil, fmt.Errorf("result %d: %d rows but num_rows %d", i, len(tb.Rows), r.NumRows)
		}
		for _, f := range r.Schema {
			tb.Schema = append(tb.Schema, Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable})
		}
		if r.Error != nil {
			tb.Err = *r.Error
		}
		if r.API != nil {
			tb.API = *r.API
		}
		if r.EngineVersion != nil {
			tb.EngineVersion = *r.EngineVersion
		}
		if r.Seconds != nil {
			tb.Seconds, _ = r.Seconds.Float64()
		}
		tables[i] = tb
	}
	return tables, nil
}
