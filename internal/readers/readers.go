// Package readers says which Delta reader APIs open a table that cdc2delta wrote, and
// why: for each API of the reader versions the full tier pins
// (scripts/py/requirements.txt), whether it reads a table with given features, refuses
// it with which message, or reads it wrongly. `cdc2delta describe` prints it for a
// table. The full tier's reader matrix (cmd/cdc2delta/readers_integration_test.go)
// checks every prediction against the real readers, rows and refusal messages, so a
// reader upgrade that starts to work, or stops, fails it until this package and
// docs/readers.md (the matrix's output) say so.
//
// The package is for cdc2delta's own commands and tests and carries no API-stability
// promise.
package readers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Pinned reader versions: the knowledge below holds for these.
const (
	DeltaRSVersion = "deltalake 1.6.6"
	PolarsVersion  = "polars 2.1.0"
	DuckDBVersion  = "duckdb 1.5.5 + duckdb-extension-delta 1.5.5"
	SparkVersion   = "pyspark 4.1.1 + delta-spark 4.3.1"
)

// API is one way of reading a table.
type API struct {
	// Engine and Call name it for scripts/py/deltaread.py ("deltars", "to_pandas").
	Engine, Call string
	// Reader is the library ("delta-rs"), Version its pinned packages, Name the
	// call as a user writes it ("DeltaTable(path).to_pandas()").
	Reader, Version, Name string
	// Filtered says the matrix reads it with a predicate (id > 2).
	Filtered bool
	// ChangeFeed says it reads the change data feed: not applicable to a table
	// without one.
	ChangeFeed bool
	// TimeTravel says it reads an older version (VERSION AS OF 1).
	TimeTravel bool
}

// ID is "engine.call".
func (a API) ID() string { return a.Engine + "." + a.Call }

// APIs are the reader APIs the matrix tests, in its column order.
var APIs = []API{
	{Engine: "deltars", Call: "to_pandas", Reader: "delta-rs", Version: DeltaRSVersion, Name: "DeltaTable(path).to_pandas()"},
	{Engine: "deltars", Call: "to_pyarrow_dataset", Reader: "delta-rs", Version: DeltaRSVersion, Name: "to_pyarrow_dataset() + filter", Filtered: true},
	{Engine: "deltars", Call: "querybuilder", Reader: "delta-rs", Version: DeltaRSVersion, Name: "QueryBuilder SQL"},
	{Engine: "deltars", Call: "load_cdf", Reader: "delta-rs", Version: DeltaRSVersion, Name: "load_cdf()", ChangeFeed: true},
	{Engine: "polars", Call: "read_delta", Reader: "polars", Version: PolarsVersion, Name: "pl.read_delta(path)"},
	{Engine: "polars", Call: "scan_delta", Reader: "polars", Version: PolarsVersion, Name: "pl.scan_delta(path) + filter", Filtered: true},
	{Engine: "duckdb", Call: "delta_scan", Reader: "DuckDB", Version: DuckDBVersion, Name: "delta_scan(path)"},
	{Engine: "spark", Call: "read", Reader: "Spark", Version: SparkVersion, Name: `spark.read.format("delta")`},
	{Engine: "spark", Call: "read_change_feed", Reader: "Spark", Version: SparkVersion, Name: "readChangeFeed", ChangeFeed: true},
	{Engine: "spark", Call: "version_as_of", Reader: "Spark", Version: SparkVersion, Name: "VERSION AS OF", TimeTravel: true},
}

// Versions lists the pinned reader versions, for headers.
func Versions() string {
	return strings.Join([]string{DeltaRSVersion, PolarsVersion, DuckDBVersion, SparkVersion}, ", ")
}

// Table is what decides whether a reader opens a table.
type Table struct {
	// ReaderFeatures are the explicitly listed reader features.
	ReaderFeatures []string
	// LegacyColumnMapping is reader version 2: column mapping without a listed
	// reader feature (cdc2delta before ADR 0027, Spark's (2,7) tables).
	LegacyColumnMapping bool
	// ColumnMapping says delta.columnMapping.mode is name or id.
	ColumnMapping bool
	// ChangeDataFeed says delta.enableChangeDataFeed is on.
	ChangeDataFeed bool
	// Partitioned says the table has partition columns.
	Partitioned bool
}

// TableOf describes a table from its protocol and metadata.
func TableOf(p deltalog.Protocol, meta deltalog.Metadata) Table {
	return Table{
		ReaderFeatures:      slices.Clone(p.ReaderFeatures),
		LegacyColumnMapping: p.MinReaderVersion == 2,
		ColumnMapping:       deltalog.ColumnMappingMode(&meta) != "none",
		ChangeDataFeed:      strings.EqualFold(meta.Configuration[deltalog.PropEnableChangeDataFeed], "true"),
		Partitioned:         len(meta.PartitionColumns) > 0,
	}
}

func (t Table) has(feature string) bool { return slices.Contains(t.ReaderFeatures, feature) }

// Outcome is what a reader does with a table.
type Outcome string

// Outcomes.
const (
	// Reads: the rows are the table's.
	Reads Outcome = "reads"
	// Refuses: the call fails with the Verdict's Refusal.
	Refuses Outcome = "refuses"
	// Wrong: the call returns rows that are not the table's (Verdict.Wrong).
	Wrong Outcome = "wrong"
	// NotApplicable: a change data feed read of a table without one.
	NotApplicable Outcome = "n/a"
)

// WrongKind says how a Wrong read differs from the table.
type WrongKind string

// Wrong reads.
const (
	// AllNull: every value reads as null (and a filter matches nothing).
	AllNull WrongKind = "every value null"
	// PartitionNull: the partition columns read as null.
	PartitionNull WrongKind = "partition columns null"
)

// Verdict is one API's outcome on a table.
type Verdict struct {
	API     API
	Outcome Outcome
	// Why says what in the table decides it, for people.
	Why string
	// Refusal are the fragments the reader's error message contains (Refuses).
	Refusal []string
	// Wrong says how the rows differ (Wrong).
	Wrong WrongKind
	// Fix is the table setting that makes the API read the table, if any.
	Fix string
}

// Settings that make the refusing APIs read.
const (
	fixDV      = "deletion_vectors: false"
	fixMapping = "column_names: portable"
)

// Verdicts returns what every API of APIs does with t, in APIs order.
func Verdicts(t Table) []Verdict {
	out := make([]Verdict, len(APIs))
	for i, a := range APIs {
		out[i] = verdict(a, t)
	}
	return out
}

func verdict(a API, t Table) Verdict {
	v := Verdict{API: a, Outcome: Reads}
	if a.ChangeFeed && !t.ChangeDataFeed {
		v.Outcome, v.Why, v.Fix = NotApplicable, "the table has no change data feed", "change_data_feed: true"
		return v
	}
	switch a.ID() {
	case "deltars.to_pandas", "deltars.to_pyarrow_dataset":
		// delta-rs's pyarrow reader knows neither feature, and checks only the listed
		// reader features: legacy reader 2 passes and is read without the mapping.
		var refused, fixes []string
		for _, f := range []string{deltalog.FeatureColumnMapping, deltalog.FeatureDeletionVectors} {
			if t.has(f) {
				refused = append(refused, f)
				fixes = append(fixes, map[string]string{deltalog.FeatureColumnMapping: fixMapping, deltalog.FeatureDeletionVectors: fixDV}[f])
			}
		}
		switch {
		case len(refused) > 0:
			v.Outcome, v.Why, v.Fix = Refuses, "refuses the reader features "+strings.Join(refused, ", ")+" (its pyarrow reader has neither)", strings.Join(fixes, " and ")
			v.Refusal = append([]string{"The table has set these reader features:"}, quoted(refused)...)
			v.Refusal = append(v.Refusal, "but these are not yet supported by the deltalake reader")
		case t.LegacyColumnMapping:
			v.Outcome, v.Wrong, v.Fix = Wrong, AllNull, fixMapping+" (tables cdc2delta makes with column mapping now list the feature, which it refuses)"
			v.Why = "reads the column-mapped files without the mapping: reader version 2 lists no feature for it to refuse"
		}
	case "deltars.load_cdf":
		if t.ColumnMapping {
			v.Outcome, v.Why, v.Fix = Refuses, "has no change data feed reader for column-mapped tables", fixMapping
			v.Refusal = []string{"Column mapping is not supported for read operation 'CHANGE DATA FEED scans' yet"}
		}
	case "polars.read_delta", "polars.scan_delta":
		switch {
		case t.has(deltalog.FeatureColumnMapping):
			v.Outcome, v.Why, v.Fix = Refuses, "refuses the reader feature columnMapping", fixMapping
			v.Refusal = []string{"delta table requires reader features ['columnMapping'], which polars does not support"}
		case t.LegacyColumnMapping:
			v.Outcome, v.Why, v.Fix = Refuses, "refuses reader version 2 (column mapping)", fixMapping
			v.Refusal = []string{"delta table requires reader version 2 (column mapping), which polars does not support"}
		}
	case "duckdb.delta_scan":
		if t.ColumnMapping && t.Partitioned {
			v.Outcome, v.Wrong, v.Fix = Wrong, PartitionNull, fixMapping+", or without partition_by"
			v.Why = "reads the partition columns of a column-mapped table as null (duckdb/duckdb-delta#343)"
		}
	}
	return v
}

func quoted(fs []string) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = "'" + f + "'"
	}
	return out
}

// Recipe is a copy-paste way to read a table with one reader: the reader matrix runs
// each on a table created with the default settings (deletion vectors, column mapping).
type Recipe struct {
	// Reader names the reader, Engine its deltaread.py engine.
	Reader, Engine string
	// Install is the pinned pip line; Needs says what else it needs, if anything.
	Install, Needs string
	// Note says what else works, on which tables.
	Note string
	// API is the ID of the API whose verdict says whether the recipe reads a table.
	API string
	// code is Python with %[1]s for the table path as a Python string literal and
	// %[2]s where at goes to read a version.
	code string
	// at is the argument that selects version %d.
	at string
}

// Code is the recipe's Python for the table at path.
func (r Recipe) Code(path string) string { return fmt.Sprintf(r.code, PyString(path), "") }

// Command is the recipe as a shell command for the table at path.
func (r Recipe) Command(path string) string { return `python -c "` + r.Code(path) + `"` }

// CommandAt is the recipe as a shell command reading version v of the table at path.
func (r Recipe) CommandAt(path string, v int64) string {
	return `python -c "` + fmt.Sprintf(r.code, PyString(path), fmt.Sprintf(r.at, v)) + `"`
}

// PyString is s as a single-quoted Python literal.
func PyString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// Recipes read the default table with each reader.
var Recipes = []Recipe{
	{
		Reader:  "delta-rs",
		Engine:  "deltars",
		Install: "pip install deltalake==1.6.6 pyarrow==26.0.1 pandas==3.1.1",
		Note:    "DeltaTable(path).to_pandas() reads tables created with deletion_vectors: false and column_names: portable; QueryBuilder reads every table.",
		API:     "deltars.querybuilder",
		code: "import pyarrow as pa; from deltalake import DeltaTable, QueryBuilder; " +
			"print(pa.table(QueryBuilder().register('t', DeltaTable(%[1]s%[2]s)).execute('SELECT * FROM t LIMIT 10').read_all()).to_pandas())",
		at: ", version=%d",
	},
	{
		Reader:  "polars",
		Engine:  "polars",
		Install: "pip install polars==2.1.0 deltalake==1.6.6 pyarrow==26.0.1",
		Note:    "pl.read_delta(path) and pl.scan_delta(path) read tables without column mapping (deletion vectors are fine); this goes through delta-rs's QueryBuilder and reads every table.",
		API:     "deltars.querybuilder",
		code: "import polars as pl, pyarrow as pa; from deltalake import DeltaTable, QueryBuilder; " +
			"print(pl.from_arrow(pa.table(QueryBuilder().register('t', DeltaTable(%[1]s%[2]s)).execute('SELECT * FROM t').read_all())))",
		at: ", version=%d",
	},
	{
		Reader:  "DuckDB",
		Engine:  "duckdb",
		Install: "pip install duckdb==1.5.5 duckdb-extension-delta==1.5.5",
		API:     "duckdb.delta_scan",
		Needs:   "nothing at run time: the delta extension is in the wheel and loaded from it (duckdb 2.0 from pip has no such wheel, and INSTALL delta downloads from DuckDB's extension server)",
		Note:    "Partition columns of a column-mapped table read as NULL (duckdb/duckdb-delta#343).",
		code: "import duckdb, duckdb_extension_delta as d, pathlib; con = duckdb.connect(); " +
			"con.load_extension(str(next(pathlib.Path(d.__file__).parent.glob('extensions/*/delta.duckdb_extension')))); " +
			"print(con.sql('SELECT * FROM delta_scan(?%[2]s) LIMIT 10', params=[%[1]s]))",
		at: ", version=%d",
	},
	{
		Reader:  "Spark",
		Engine:  "spark",
		Install: "pip install pyspark==4.1.1 delta-spark==4.3.1",
		API:     "spark.read",
		Needs:   "Java 17, and Maven Central on the first start (the delta-spark jars, cached in ~/.ivy2)",
		code: "from delta import configure_spark_with_delta_pip; from pyspark.sql import SparkSession; " +
			"b = SparkSession.builder.config('spark.sql.extensions', 'io.delta.sql.DeltaSparkSessionExtension')" +
			".config('spark.sql.catalog.spark_catalog', 'org.apache.spark.sql.delta.catalog.DeltaCatalog'); " +
			"configure_spark_with_delta_pip(b).getOrCreate().read.format('delta')%[2]s.load(%[1]s).show(10)",
		at: ".option('versionAsOf', %d)",
	},
}
