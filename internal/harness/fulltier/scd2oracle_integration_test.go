//go:build integration

package fulltier_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// oracleBase is the commit time of seq 0; seq n commits n milliseconds later.
var oracleBase = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

func oracleTS(seq int64) time.Time { return oracleBase.Add(time.Duration(seq) * time.Millisecond) }

// ev builds an event on key id; cols are the after image's columns beside
// id (nil for a delete).
func ev(op fulltier.SCD2Op, seq int64, id int64, batch int, cols map[string]any) fulltier.SCD2Event {
	e := fulltier.SCD2Event{Key: map[string]any{"id": id}, Op: op, Seq: seq, TS: oracleTS(seq), Batch: batch}
	if cols != nil {
		e.Row = map[string]any{"id": id}
		for c, v := range cols {
			e.Row[c] = v
		}
	}
	return e
}

func truncate(seq int64, batch int) fulltier.SCD2Event {
	return fulltier.SCD2Event{Op: fulltier.SCD2Truncate, Seq: seq, TS: oracleTS(seq), Batch: batch}
}

func name(n string) map[string]any { return map[string]any{"name": n} }

func nameNote(n, note string) map[string]any { return map[string]any{"name": n, "note": note} }

// version builds an expected history row of key id; end 0 is the current
// version.
func version(id int64, cols map[string]any, start, end int64) fulltier.SCD2Row {
	r := fulltier.SCD2Row{
		Key:      map[string]any{"id": id},
		Columns:  map[string]any{"id": id},
		StartSeq: start,
		StartTS:  oracleTS(start),
	}
	for c, v := range cols {
		r.Columns[c] = v
	}
	if end != 0 {
		r.EndSeq = &end
		ts := oracleTS(end)
		r.EndTS = &ts
	}
	return r
}

// compositeEv builds an event on the key (tenant, id).
func compositeEv(op fulltier.SCD2Op, seq int64, tenant string, id int64, batch int, cols map[string]any) fulltier.SCD2Event {
	key := map[string]any{"tenant": tenant, "id": id}
	e := fulltier.SCD2Event{Key: key, Op: op, Seq: seq, TS: oracleTS(seq), Batch: batch}
	if cols != nil {
		e.Row = map[string]any{"tenant": tenant, "id": id}
		for c, v := range cols {
			e.Row[c] = v
		}
	}
	return e
}

func compositeVersion(tenant string, id int64, cols map[string]any, start, end int64) fulltier.SCD2Row {
	r := version(id, cols, start, end)
	r.Key["tenant"] = tenant
	r.Columns["tenant"] = tenant
	return r
}

// TestSCD2Oracle proves the Spark AutoCDC oracle on hand-computed histories.
// All scenarios run in one Spark session.
func TestSCD2Oracle(t *testing.T) {
	const c, u, d = fulltier.SCD2Create, fulltier.SCD2Update, fulltier.SCD2Delete
	cases := []struct {
		name   string
		events []fulltier.SCD2Event
		opts   fulltier.SCD2Options
		want   []fulltier.SCD2Row
	}{
		{
			name: "insert update delete reinsert",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, name("a")), ev(u, 2, 1, 0, name("b")), ev(d, 3, 1, 0, nil), ev(c, 4, 1, 0, name("c")),
			},
			want: []fulltier.SCD2Row{
				version(1, name("a"), 1, 2), version(1, name("b"), 2, 3), version(1, name("c"), 4, 0),
			},
		},
		{
			name: "a delete separates equal versions",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, name("a")), ev(d, 2, 1, 0, nil), ev(c, 3, 1, 0, name("a")),
			},
			want: []fulltier.SCD2Row{version(1, name("a"), 1, 2), version(1, name("a"), 3, 0)},
		},
		{
			name: "composite key, numbers and booleans",
			events: []fulltier.SCD2Event{
				compositeEv(c, 1, "t1", 1, 0, map[string]any{"price": 1.5, "ok": true}),
				compositeEv(c, 2, "t2", 1, 0, map[string]any{"price": 2.25, "ok": false}),
				compositeEv(u, 3, "t1", 1, 0, map[string]any{"price": 1.5, "ok": false}),
				compositeEv(d, 4, "t2", 1, 0, nil),
			},
			opts: fulltier.SCD2Options{Types: map[string]string{"price": "double"}},
			want: []fulltier.SCD2Row{
				compositeVersion("t1", 1, map[string]any{"price": 1.5, "ok": true}, 1, 3),
				compositeVersion("t1", 1, map[string]any{"price": 1.5, "ok": false}, 3, 0),
				compositeVersion("t2", 1, map[string]any{"price": 2.25, "ok": false}, 2, 4),
			},
		},
		{
			name: "late event splits the version it falls in",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, name("a")), ev(u, 5, 1, 0, name("c")),
				ev(u, 3, 1, 1, name("b")),
			},
			want: []fulltier.SCD2Row{
				version(1, name("a"), 1, 3), version(1, name("b"), 3, 5), version(1, name("c"), 5, 0),
			},
		},
		{
			name: "late event equal to its version changes nothing",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, name("a")), ev(u, 5, 1, 0, name("c")),
				ev(u, 3, 1, 1, name("a")),
			},
			want: []fulltier.SCD2Row{version(1, name("a"), 1, 5), version(1, name("c"), 5, 0)},
		},
		{
			name: "late update of a deleted key",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, name("a")), ev(d, 5, 1, 0, nil),
				ev(u, 3, 1, 1, name("b")),
			},
			want: []fulltier.SCD2Row{version(1, name("a"), 1, 3), version(1, name("b"), 3, 5)},
		},
		{
			name: "delete before its insert arrives",
			events: []fulltier.SCD2Event{
				ev(d, 5, 1, 0, nil),
				ev(c, 2, 1, 1, name("a")),
			},
			want: []fulltier.SCD2Row{version(1, name("a"), 2, 5)},
		},
		{
			name: "re-delivered events in and across batches",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, name("a")), ev(u, 2, 1, 0, name("b")), ev(u, 2, 1, 0, name("b")),
				ev(u, 2, 1, 1, name("b")), ev(u, 3, 1, 1, name("c")),
			},
			want: []fulltier.SCD2Row{
				version(1, name("a"), 1, 2), version(1, name("b"), 2, 3), version(1, name("c"), 3, 0),
			},
		},
		{
			name: "truncate closes every open version, late ones too",
			events: []fulltier.SCD2Event{
				ev(c, 10, 1, 0, name("a")), ev(c, 20, 2, 0, name("b")), truncate(30, 0), ev(c, 40, 1, 0, name("a2")),
				ev(c, 25, 3, 1, name("late")),
			},
			want: []fulltier.SCD2Row{
				version(1, name("a"), 10, 30), version(1, name("a2"), 40, 0),
				version(2, name("b"), 20, 30),
				version(3, name("late"), 25, 30),
			},
		},
		{
			name: "untracked column changes in place",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, nameNote("a", "x")), ev(u, 2, 1, 0, nameNote("a", "y")), ev(u, 3, 1, 0, nameNote("b", "y")),
				ev(u, 4, 1, 1, nameNote("b", "z")),
			},
			opts: fulltier.SCD2Options{TrackHistory: []string{"name"}},
			want: []fulltier.SCD2Row{version(1, nameNote("a", "y"), 1, 3), version(1, nameNote("b", "z"), 3, 0)},
		},
		{
			name: "track history except a column",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, nameNote("a", "x")), ev(u, 2, 1, 0, nameNote("a", "y")), ev(u, 3, 1, 0, nameNote("b", "y")),
			},
			opts: fulltier.SCD2Options{TrackHistoryExcept: []string{"note"}},
			want: []fulltier.SCD2Row{version(1, nameNote("a", "y"), 1, 3), version(1, nameNote("b", "y"), 3, 0)},
		},
		{
			name: "adjacent equal versions are one",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, name("a")), ev(u, 2, 1, 0, name("a")), ev(u, 3, 1, 0, name("b")), ev(u, 4, 1, 0, name("a")),
			},
			want: []fulltier.SCD2Row{
				version(1, name("a"), 1, 3), version(1, name("b"), 3, 4), version(1, name("a"), 4, 0),
			},
		},
		{
			name: "three batches, a late delete in the last",
			events: []fulltier.SCD2Event{
				ev(c, 1, 1, 0, name("a")), ev(c, 2, 2, 0, name("x")),
				ev(u, 4, 1, 1, name("b")),
				ev(d, 2, 1, 2, nil),
			},
			want: []fulltier.SCD2Row{
				version(1, name("a"), 1, 2), version(1, name("b"), 4, 0),
				version(2, name("x"), 2, 0),
			},
		},
	}

	scenarios := make([]fulltier.SCD2Scenario, len(cases))
	for i, tc := range cases {
		scenarios[i] = fulltier.SCD2Scenario{Name: tc.name, Events: tc.events, Options: tc.opts}
	}
	start := time.Now()
	res := fulltier.SCD2Scenarios(t, scenarios...)
	cpu := "unknown"
	if res.Stats.JVMCPUSeconds != nil {
		cpu = fmt.Sprintf("%.0fs", *res.Stats.JVMCPUSeconds)
	}
	t.Logf("spark %s: %d scenarios in %s (session start %.1fs, pipeline run %.1fs, JVM CPU %s, microbatches per flow %v)",
		res.Stats.SparkVersion, len(cases), time.Since(start).Round(time.Second),
		res.Stats.SessionSeconds, res.Stats.RunSeconds, cpu, res.Stats.Microbatches)
	require.Equal(t, "4.3.0", res.Stats.SparkVersion)
	// Flows: the name-only scenarios (3 batches), the composite key's and
	// the two track-history ones.
	require.Equal(t, []int{1, 1, 2, 3}, res.Stats.Microbatches)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, res.Histories[tc.name])
		})
	}
}
