//go:build integration

package fulltier_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// makeTable writes a two-commit Delta table with delta-rs: ids 1-3 with txn
// app-0=7, then ids 4-5 with app-0=9 and app-1=3. sys.argv[1] is the path;
// an s3:// path is written to the full tier's moto server.
const makeTable = `
import datetime as dt, decimal, os, sys
import pyarrow as pa
from deltalake import write_deltalake, CommitProperties, Transaction

path = sys.argv[1]
opts = None
if path.startswith("s3://"):
    opts = {"AWS_ENDPOINT_URL": os.environ["CDC2DELTA_S3_ENDPOINT"], "AWS_ALLOW_HTTP": "true",
            "AWS_S3_ALLOW_UNSAFE_RENAME": "true", "AWS_REGION": os.environ["AWS_REGION"],
            "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"]}
schema = pa.schema([
    ("id", pa.int64()), ("name", pa.string()), ("price", pa.decimal128(10, 2)),
    ("ts", pa.timestamp("us", tz="UTC")), ("ntz", pa.timestamp("us")), ("d", pa.date32()),
    ("f", pa.float64()), ("ok", pa.bool_()), ("b", pa.binary()), ("i", pa.int32()),
    ("s", pa.struct([("x", pa.int64()), ("y", pa.string())])), ("arr", pa.list_(pa.int64())),
    ("m", pa.map_(pa.string(), pa.int64())),
])
def batch(ids):
    return pa.table({
        "id": ids, "name": [f"n{i}" if i % 2 else None for i in ids],
        "price": [decimal.Decimal(f"{i}.5{i}") for i in ids],
        "ts": [dt.datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=dt.timezone.utc) + dt.timedelta(hours=i) for i in ids],
        "ntz": [dt.datetime(2024, 1, 1, 8, 30) + dt.timedelta(days=i) for i in ids],
        "d": [dt.date(2024, 2, 1) + dt.timedelta(days=i) for i in ids],
        "f": [i * 1.25 for i in ids], "ok": [i % 2 == 0 for i in ids],
        "b": [bytes([i, 255]) for i in ids], "i": [i * 10 for i in ids],
        "s": [{"x": i, "y": "v"} for i in ids], "arr": [[i, i + 1] for i in ids],
        "m": [[("b", i), ("a", -i)] for i in ids],
    }, schema=schema)
write_deltalake(path, batch([1, 2, 3]), storage_options=opts,
                commit_properties=CommitProperties(app_transactions=[Transaction("app-0", 7)]))
write_deltalake(path, batch([4, 5]), mode="append", storage_options=opts,
                commit_properties=CommitProperties(app_transactions=[
                    Transaction("app-0", 9), Transaction("app-1", 3)]))
`

// TestReadTableAllEngines reads one delta-rs table with delta-rs, DuckDB and
// Spark: latest, time-travelled and filtered, and checks that all engines
// give identical canonical rows and types, and the same txn versions.
func TestReadTableAllEngines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "table")
	fulltier.PythonCode(t, makeTable, path)

	apps := []string{"app-0", "app-1", "missing"}
	v0 := int64(0)
	var reqs []fulltier.Request
	for _, e := range fulltier.Engines() {
		reqs = append(reqs,
			fulltier.Request{Engine: e, Path: path, ReadOptions: fulltier.ReadOptions{AppIDs: apps}},
			fulltier.Request{Engine: e, Path: path, ReadOptions: fulltier.ReadOptions{Version: &v0}},
			fulltier.Request{Engine: e, Path: path, ReadOptions: fulltier.ReadOptions{Filter: "id > 3"}},
		)
	}
	tables := fulltier.Read(t, reqs...)
	for _, tb := range tables {
		require.Empty(t, tb.Err, "%s", tb.Engine)
	}

	latest := tables[0]
	require.Equal(t, fulltier.DeltaRS, latest.Engine)
	require.Len(t, latest.Rows, 5)
	require.Equal(t, []string{"id", "name", "price", "ts", "ntz", "d", "f", "ok", "b", "i", "s", "arr", "m"},
		latest.Columns())
	require.Equal(t, map[string]any{
		"id": jsonNum("2"), "name": nil, "price": "2.52",
		"ts": "2024-01-01T14:00:00.123456Z", "ntz": "2024-01-03T08:30:00.000000",
		"d": "2024-02-03", "f": jsonNum("2.5"), "ok": true, "b": "02ff", "i": jsonNum("20"),
		"s":   map[string]any{"x": jsonNum("2"), "y": "v"},
		"arr": []any{jsonNum("2"), jsonNum("3")},
		"m": []any{
			map[string]any{"key": "a", "value": jsonNum("-2")},
			map[string]any{"key": "b", "value": jsonNum("2")},
		},
	}, latest.Rows[1])
	require.Equal(t, map[string]*int64{"app-0": ptr(9), "app-1": ptr(3), "missing": nil}, latest.Txn)
	require.NotNil(t, latest.Version)
	require.Equal(t, int64(1), *latest.Version)

	for i := 0; i < len(tables); i += 3 {
		tb, old, filtered := tables[i], tables[i+1], tables[i+2]
		t.Run(string(tb.Engine), func(t *testing.T) {
			require.Equal(t, latest.Columns(), tb.Columns())
			require.Equal(t, latest.Types(), tb.Types())
			require.Equal(t, latest.Rows, tb.Rows)
			require.Equal(t, latest.Rows[:3], old.Rows, "version 0")
			require.Equal(t, latest.Rows[3:], filtered.Rows, "id > 3")
			if tb.Engine != fulltier.DuckDB { // DuckDB reports neither txns nor nullability
				require.Equal(t, latest.Txn, tb.Txn)
				require.Equal(t, latest.Schema, tb.Schema)
				require.Equal(t, latest.Protocol, tb.Protocol)
			}
		})
	}
}

// TestReadTableS3 reads a delta-rs table on the moto S3 server with the
// engines that are set up for S3 (delta-rs and DuckDB).
func TestReadTableS3(t *testing.T) {
	t.Parallel()
	path := "s3://" + fulltier.NewBucket(t) + "/tables/t1"
	fulltier.PythonCode(t, makeTable, path)

	tables := fulltier.Read(t,
		fulltier.Request{Engine: fulltier.DeltaRS, Path: path, ReadOptions: fulltier.ReadOptions{AppIDs: []string{"app-0"}}},
		fulltier.Request{Engine: fulltier.DuckDB, Path: path},
	)
	for _, tb := range tables {
		require.Empty(t, tb.Err, "%s", tb.Engine)
	}
	require.Len(t, tables[0].Rows, 5)
	require.Equal(t, map[string]*int64{"app-0": ptr(9)}, tables[0].Txn)
	require.Equal(t, tables[0].Rows, tables[1].Rows)
	require.Equal(t, tables[0].Types(), tables[1].Types())
}
