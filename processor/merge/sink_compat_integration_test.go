//go:build integration

package merge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestSinkReadersAgree merges batches with updates, deletes, unavailable
// columns and a column-mapped name into tables with deletion vectors and
// with copy-on-write, and checks that delta-rs, DuckDB and Spark read exactly
// the rows our reader reads, and that delta-rs and Spark see the txn offsets.
func TestSinkReadersAgree(t *testing.T) {
	type table struct {
		mode Mode
		dir  string
		want []map[string]any
		txn  int64
	}
	var tables []*table
	for _, mode := range []Mode{ModeDV, ModeCoW} {
		tb := &table{mode: mode, dir: t.TempDir()}
		if keep := os.Getenv("CDC2DELTA_COMPAT_KEEP"); keep != "" {
			// Leaves the tables behind for debugging with the engines by hand.
			tb.dir = filepath.Join(keep, "sink-"+string(mode))
			require.NoError(t, os.RemoveAll(tb.dir))
		}
		store, err := localstore.New(localstore.Options{Dir: tb.dir})
		require.NoError(t, err)
		tb.txn = applyMixedBatches(t, newTestSink(t, store, mode, DeleteHard))
		for id, it := range readItems(t, store) {
			var notes any
			if it.notes != "" { // only an insert with an unavailable LOB leaves it NULL
				notes = it.notes
			}
			tb.want = append(tb.want, map[string]any{
				"id": json.Number(strconv.Itoa(int(id))), "name": it.name, "notes": notes,
				"Unit Price": fmt.Sprintf("%.2f", float64(it.price)/100), cdctable.ColPosition: it.pos, cdctable.ColOp: it.op,
			})
		}
		tables = append(tables, tb)
	}
	appID := cdctable.TopicPartition{Topic: "sales.dbo.items", Partition: 0}.AppID()
	var reqs []fulltier.Request
	for _, tb := range tables {
		reqs = append(reqs, engineRequests(tb.dir, appID)...)
	}
	got := fulltier.Read(t, reqs...)
	for i, g := range got {
		tb := tables[i/len(fulltier.Engines())]
		t.Run(fmt.Sprintf("%s/%s", tb.mode, g.Engine), func(t *testing.T) {
			require.Empty(t, g.Err)
			require.Equal(t, []string{"id", "name", "Unit Price", "notes", cdctable.ColPosition, cdctable.ColOp, cdctable.ColCommitTime}, g.Columns())
			var rows []map[string]any
			for _, r := range g.Rows {
				ts, ok := r[cdctable.ColCommitTime].(string)
				require.True(t, ok, "commit time %v", r[cdctable.ColCommitTime])
				_, err := time.Parse("2006-01-02T15:04:05.999999Z", ts)
				require.NoError(t, err)
				delete(r, cdctable.ColCommitTime)
				rows = append(rows, r)
			}
			require.ElementsMatch(t, tb.want, rows)
			if g.Engine != fulltier.DuckDB {
				require.NotNil(t, g.Txn[appID])
				require.Equal(t, tb.txn, *g.Txn[appID])
			}
		})
	}
}

// engineRequests asks every engine to read the table at dir whole, with the
// txn version of appID when it is not empty. delta-rs 1.6 reads column
// mapping and deletion vectors only through its DataFusion path, which a
// filter selects.
func engineRequests(dir, appID string) []fulltier.Request {
	var reqs []fulltier.Request
	for _, e := range fulltier.Engines() {
		o := fulltier.ReadOptions{}
		if appID != "" {
			o.AppIDs = []string{appID}
		}
		if e == fulltier.DeltaRS {
			o.Filter = "TRUE"
		}
		reqs = append(reqs, fulltier.Request{Engine: e, Path: dir, ReadOptions: o})
	}
	return reqs
}
