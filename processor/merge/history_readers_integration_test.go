//go:build integration

package merge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestHistoryAsOfReaders writes the same batches to a current-state table
// and to its history table, then has delta-rs and DuckDB (Spark at every
// tenth batch and the last) read the history table "as of" the end of every
// batch:
//
//	WHERE __START_AT <= t AND (__END_AT > t OR __END_AT IS NULL)
//
// which must give the rows of the current-state table time-travelled (by
// delta-rs) to the version that batch committed. Each batch holds every
// event of its commit milliseconds, so that version is the one current at t.
// polars, which reads no deletion vectors, reads the same history written
// without them, equal to delta-rs's read of the one with them.
func TestHistoryAsOfReaders(t *testing.T) {
	curDir, histDir, cowDir := t.TempDir(), t.TempDir(), t.TempDir()
	cur, err := localstore.New(localstore.Options{Dir: curDir})
	require.NoError(t, err)
	hs, err := localstore.New(localstore.Options{Dir: histDir})
	require.NoError(t, err)
	sink := newTestSink(t, cur, ModeDV, DeleteHard)
	h, err := OpenHistory(t.Context(), HistoryOptions{Store: hs, TableName: "items_history"})
	require.NoError(t, err)
	// The same history without deletion vectors, for readers without them (polars).
	cs, err := localstore.New(localstore.Options{Dir: cowDir})
	require.NoError(t, err)
	hc, err := OpenHistory(t.Context(), HistoryOptions{Store: cs, TableName: "items_history", DeletionVectors: new(false)})
	require.NoError(t, err)

	g := &histGen{r: rand.New(rand.NewPCG(7, 46)), alive: map[int32]bool{}, name: map[int32]string{}, truncates: true, noop: true, placeholders: true}
	hr := &histRun{offsets: map[int32]int64{}}
	var stream []codecs.Change
	for range 300 {
		stream = append(stream, g.next()...)
	}
	type point struct {
		version int64
		at      time.Time
	}
	var points []point
	for len(stream) > 0 {
		// Every event of the batch's last millisecond goes with it.
		n := min(len(stream), 1+g.r.IntN(15))
		for n < len(stream) && stream[n].CommitMillis == stream[n-1].CommitMillis {
			n++
		}
		var b Batch
		b.LastOffsets = map[cdctable.TopicPartition]int64{}
		for _, c := range stream[:n] {
			r := hr.record(c)
			b.Records = append(b.Records, r)
			b.LastOffsets[r.TopicPartition] = r.Offset
		}
		at := time.UnixMilli(stream[n-1].CommitMillis).UTC()
		stream = stream[n:]
		_, err := h.Apply(t.Context(), b)
		require.NoError(t, err)
		_, err = hc.Apply(t.Context(), b)
		require.NoError(t, err)
		res, err := sink.Apply(t.Context(), b)
		require.NoError(t, err)
		if res.Committed {
			points = append(points, point{res.Version, at})
		}
	}
	require.Greater(t, len(points), 10)

	var reqs []fulltier.Request
	sample := points
	const perPoint = 4
	for i, p := range sample {
		ts := p.at.Format("2006-01-02 15:04:05.000000")
		asOf := func(typ string) string {
			return fmt.Sprintf("__START_AT <= CAST('%s' AS %s) AND (__END_AT > CAST('%s' AS %s) OR __END_AT IS NULL)", ts, typ, ts, typ)
		}
		v := p.version
		reqs = append(reqs,
			fulltier.Request{Engine: fulltier.DeltaRS, Path: curDir, ReadOptions: fulltier.ReadOptions{Version: &v, Filter: "TRUE", RowsOnly: true}},
			fulltier.Request{Engine: fulltier.DeltaRS, Path: histDir, ReadOptions: fulltier.ReadOptions{Filter: asOf("TIMESTAMP"), RowsOnly: true}},
			fulltier.Request{Engine: fulltier.DuckDB, Path: histDir, ReadOptions: fulltier.ReadOptions{Filter: asOf("TIMESTAMP"), RowsOnly: true}})
		// Spark starts once for all; it reads a few of the points.
		spark := fulltier.Request{Engine: fulltier.Spark, Path: histDir, ReadOptions: fulltier.ReadOptions{Filter: asOf("TIMESTAMP_NTZ"), RowsOnly: true}}
		if i%10 != 0 && i != len(sample)-1 {
			spark = fulltier.Request{Engine: fulltier.DuckDB, Path: histDir, ReadOptions: fulltier.ReadOptions{Filter: asOf("TIMESTAMP"), RowsOnly: true}}
		}
		reqs = append(reqs, spark)
	}
	// The whole history: delta-rs on the table with deletion vectors, polars
	// on the one without.
	reqs = append(reqs, fulltier.Request{Engine: fulltier.DeltaRS, Path: histDir, ReadOptions: fulltier.ReadOptions{Filter: "TRUE", RowsOnly: true}},
		fulltier.Request{Engine: fulltier.Polars, Path: cowDir, ReadOptions: fulltier.ReadOptions{RowsOnly: true}})
	got := fulltier.Read(t, reqs...)
	whole, polars := got[len(got)-2], got[len(got)-1]
	require.Empty(t, whole.Err)
	require.Empty(t, polars.Err)
	require.Greater(t, len(whole.Rows), len(points), "versions")
	require.ElementsMatch(t, whole.Rows, polars.Rows, "polars reads the history table without deletion vectors as delta-rs reads the one with them")
	got = got[:len(got)-2]
	source := func(tb fulltier.Table) []string {
		require.Empty(t, tb.Err, "%s %s", tb.Engine, tb.Path)
		var out []string
		for _, r := range tb.Rows {
			out = append(out, fmt.Sprintf("%v|%v|%v", r["id"], r["name"], r["notes"]))
		}
		slices.Sort(out)
		return out
	}
	for i, p := range sample {
		want := source(got[perPoint*i])
		if i%8 == 0 {
			t.Logf("as of %s: %d rows in the table at version %d", p.at.Format(time.RFC3339Nano), len(want), p.version)
		}
		for _, tb := range got[perPoint*i+1 : perPoint*i+perPoint] {
			require.Equal(t, want, source(tb), "%s: history as of %s against the table at version %d", tb.Engine, p.at, p.version)
			require.Equal(t, []string{"id", "name", "notes", cdctable.HistStartAt, cdctable.HistEndAt, cdctable.HistStartPosition,
				cdctable.HistEndPosition, cdctable.ColPosition, cdctable.ColCommitTime}, tb.Columns())
			for _, f := range tb.Schema {
				if f.Name == cdctable.HistStartAt || f.Name == cdctable.HistEndAt {
					require.Equal(t, "timestamp_ntz", f.Type, "%s reads %s", tb.Engine, f.Name)
				}
			}
		}
	}
}
