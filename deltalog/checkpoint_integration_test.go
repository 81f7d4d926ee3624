//go:build integration

package deltalog

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/stretchr/testify/require"
)

// ckptMakeTableScript writes a partitioned delta-rs table with a txn, deletes, a null
// partition and every stats type, leaving version 7 and no checkpoint.
const ckptMakeTableScript = `
import datetime, decimal, sys
import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

def batch(start, n, part):
    r = range(start, start + n)
    return pa.table({
        "id": pa.array(r, pa.int64()),
        "name": pa.array([f"name-{i}" if i % 3 else None for i in r], pa.string()),
        "d": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=i) for i in r], pa.date32()),
        "ts": pa.array([datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=i) for i in r], pa.timestamp("us", tz="UTC")),
        "dec": pa.array([decimal.Decimal(i) / 100 for i in r], pa.decimal128(10, 2)),
        "p": pa.array([part] * n, pa.string()),
    })

uri = sys.argv[1]
write_deltalake(uri, batch(0, 10, "a"), partition_by=["p"])
for i in range(1, 6):
    write_deltalake(uri, batch(i * 10, 10, None if i % 2 else "b c"), mode="append", partition_by=["p"],
        commit_properties=CommitProperties(app_transactions=[Transaction("kafka/orders/0", 40 + i, 1712333988110 + i)]))
dt = DeltaTable(uri)
dt.delete("id = 3")
DeltaTable(uri).delete("id >= 40 and id < 50")
`

// TestCheckpointReadByEngines writes our checkpoint for a delta-rs table, deletes the
// commits before it, and checks that delta-rs, DuckDB and Spark read from it the rows and
// txn version that delta-rs reads from the full log.
func TestCheckpointReadByEngines(t *testing.T) {
	full := filepath.Join(t.TempDir(), "full")
	fulltier.PythonCode(t, ckptMakeTableScript, full)
	want := fulltier.ReadTable(t, fulltier.DeltaRS, full, fulltier.ReadOptions{AppIDs: []string{"kafka/orders/0"}})
	require.Len(t, want.Rows, 49)

	cut := filepath.Join(t.TempDir(), "cut")
	require.NoError(t, os.CopyFS(cut, os.DirFS(full)))
	s := loadCkptTestStore(t, cut)
	st := ckptStateOf(ckptCommits(t, s, 7))
	state := []Action{{Protocol: st.protocol}, {Metadata: st.metadata}}
	for _, x := range st.txns {
		state = append(state, Action{Txn: &x})
	}
	for _, a := range st.adds {
		state = append(state, Action{Add: a})
	}
	for _, r := range st.removes {
		state = append(state, Action{Remove: r})
	}
	_, err := writeCheckpoint(t.Context(), s, 7, state)
	require.NoError(t, err)
	for _, p := range []string{checkpointPath(7), lastCheckpointPath} {
		require.NoError(t, os.WriteFile(filepath.Join(cut, p), s.files[p], 0o644))
	}
	for v := range 7 {
		require.NoError(t, os.Remove(filepath.Join(cut, fmt.Sprintf("_delta_log/%020d.json", v))))
	}

	var reqs []fulltier.Request
	for _, e := range fulltier.Engines() {
		reqs = append(reqs, fulltier.Request{Engine: e, Path: cut, ReadOptions: fulltier.ReadOptions{AppIDs: []string{"kafka/orders/0"}}})
	}
	for _, got := range fulltier.Read(t, reqs...) {
		require.Empty(t, got.Err, got.Engine)
		require.Equal(t, want.Rows, got.Rows, got.Engine)
		if got.Engine != fulltier.DuckDB {
			require.Equal(t, want.Txn, got.Txn, got.Engine)
		}
	}
}
