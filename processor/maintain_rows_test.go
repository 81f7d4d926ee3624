package processor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// TestMaintenanceBoundsCompactedRows runs tables of narrow rows through many
// small commits with maintenance on and MaxCompactRows far below what the
// target size in bytes holds: no automatic compaction of a table writes a
// file of more rows, or rewrites more rows in one commit, so the table's
// writer never indexes more at once. The change logs, which no writer
// indexes, are packed by bytes only, into files of more rows. The tables
// equal the model.
func TestMaintenanceBoundsCompactedRows(t *testing.T) {
	const maxRows = 40
	pl := newPipeline(t, dbzgen.WorkloadOptions{Seed: 59, Keys: 300, Snapshot: true})
	opts := pl.options("rows")
	opts.Batch.Records = 6
	opts.Maintenance = Maintenance{CompactAt: 4, Every: time.Millisecond, MaxCompactRows: maxRows, TailFileSize: -1}
	sinkOpts := opts.Sink
	opts.PerTable = func(src route.TableSource) TableSettings {
		return TableSettings{Sink: sinkOpts, ChangeLog: src.Path + "_changes"}
	}
	r := pl.start(opts)
	for range 6 {
		pl.produce(150)
		pl.waitCaughtUp()
	}
	// Upkeep runs beside ingest: on a busy machine a table or change log
	// may not have been compacted yet, or a change log only from few
	// files, when the tables have caught up. More changes give upkeep more
	// to do until each table is compacted and a change log's compaction
	// has shown it is packed by bytes, past the row bound.
	for round := 0; ; round++ {
		done := true
		logPacked := false
		for _, tb := range pl.tables {
			for _, path := range []string{tablePath(tb), tablePath(tb) + "_changes"} {
				n, largest, err := compactionsOf(t, opts, path)
				require.NoError(t, err)
				done = done && n > 0
				logPacked = logPacked || path != tablePath(tb) && largest > maxRows
			}
		}
		if done && logPacked {
			break
		}
		require.Less(t, round, 40, "upkeep compacted every table, and a change log past the row bound")
		time.Sleep(100 * time.Millisecond)
		if round%5 == 4 {
			pl.produce(150)
			pl.waitCaughtUp()
		}
	}
	r.close(t)
	rows := func(a deltalog.Add) int64 {
		st, ok, err := deltalog.ParseStatsSummary(a.Stats)
		require.NoError(t, err)
		require.True(t, ok, "%s has statistics", a.Path)
		return st.NumRecords
	}
	for _, tb := range pl.tables {
		for _, path := range []string{tablePath(tb), tablePath(tb) + "_changes"} {
			store, err := opts.OpenStore(t.Context(), path)
			require.NoError(t, err)
			tbl, err := deltalog.Open(t.Context(), store)
			require.NoError(t, err)
			last, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			var compactions int
			var largest, mostRewritten int64
			prev, err := tbl.SnapshotAt(t.Context(), 0)
			require.NoError(t, err)
			for v := int64(1); v <= last.Version(); v++ {
				cur, err := tbl.SnapshotAt(t.Context(), v)
				require.NoError(t, err)
				ci, err := tbl.CommitInfo(t.Context(), v)
				require.NoError(t, err)
				if ci.Operation == deltalog.OpOptimize {
					compactions++
					before, after := map[string]bool{}, map[string]bool{}
					for _, a := range prev.Files() {
						before[a.Path] = true
					}
					var rewritten int64
					for _, a := range cur.Files() {
						after[a.Path] = true
						if !before[a.Path] {
							largest = max(largest, rows(a))
						}
					}
					for _, a := range prev.Files() {
						if !after[a.Path] {
							rewritten += rows(a)
						}
					}
					mostRewritten = max(mostRewritten, rewritten)
				}
				prev = cur
			}
			t.Logf("%s: %d compactions; the largest file one wrote holds %d rows; the most one rewrote %d", path, compactions, largest, mostRewritten)
			require.Positive(t, compactions, path)
			if path == tablePath(tb) {
				require.LessOrEqual(t, largest, int64(maxRows), "%s: a compacted file of more rows", path)
				require.LessOrEqual(t, mostRewritten, int64(maxRows), "%s: a compaction of more rows", path)
			}
		}
	}
	pl.requireModel()
}

// compactionsOf counts the OPTIMIZE commits of the table at path and the
// rows of the largest file one of them wrote.
func compactionsOf(t *testing.T, opts Options, path string) (n int, largest int64, err error) {
	store, err := opts.OpenStore(t.Context(), path)
	if err != nil {
		return 0, 0, err
	}
	tbl, err := deltalog.Open(t.Context(), store)
	if err != nil {
		return 0, 0, err
	}
	snap, err := tbl.Snapshot(t.Context())
	if err != nil {
		return 0, 0, err
	}
	prev, err := tbl.SnapshotAt(t.Context(), 0)
	if err != nil {
		return 0, 0, err
	}
	for v := int64(1); v <= snap.Version(); v++ {
		cur, err := tbl.SnapshotAt(t.Context(), v)
		if err != nil {
			return 0, 0, err
		}
		ci, err := tbl.CommitInfo(t.Context(), v)
		if err != nil {
			return 0, 0, err
		}
		if ci.Operation == deltalog.OpOptimize {
			n++
			before := map[string]bool{}
			for _, a := range prev.Files() {
				before[a.Path] = true
			}
			for _, a := range cur.Files() {
				if st, ok, err := deltalog.ParseStatsSummary(a.Stats); err == nil && ok && !before[a.Path] {
					largest = max(largest, st.NumRecords)
				}
			}
		}
		prev = cur
	}
	return n, largest, nil
}
