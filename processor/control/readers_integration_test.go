//go:build integration

package control_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/internal/readers"
	"github.com/cdc2delta/cdc2delta/processor/control"
)

// timeColumns are the control table's time columns, all TIMESTAMP_NTZ in UTC.
var timeColumns = []string{"complete_through_commit_ts", "last_applied_commit_ts", "finalized_until", "updated_at"}

// advances is how many updates the test commits: past the 32 version files
// at which the version rows are folded into one, and past the checkpoints
// at versions 10, 20 and 30.
const advances = 36

// travelAt is the advance after which the test remembers the version, for
// time travel.
const travelAt = 5

// TestControlTableReaders writes a control table with control.Open and
// Advance (two tables whose complete_through moves, hence version rows,
// folded once; a table and a group with nothing but their names; a group
// with finalized_until; times given in a zone other than UTC and with
// nanoseconds) and reads it with every reader API of internal/readers that
// applies (delta-rs, polars, DuckDB, Spark; a filter on kind; time travel
// with Spark, delta-rs and DuckDB), in one Python process. Each must return
// exactly the rows control.Read (or ReadAt) returns: the same rows per kind,
// every column's value, times as the same UTC instants, NULLs as NULLs, and
// the time columns as timestamp_ntz, or refuse with the refusal
// internal/readers knows. Spark's DESCRIBE TABLE must show every column
// with its comment and the time columns as timestamp_ntz.
func TestControlTableReaders(t *testing.T) {
	start := time.Now()
	path := filepath.Join(t.TempDir(), "control")
	store, err := localstore.New(localstore.Options{Dir: path})
	require.NoError(t, err)
	clock := newClock()
	c, err := control.Open(t.Context(), store, clock.now)
	require.NoError(t, err)

	var travel int64 = -1
	for i := 1; i <= advances; i++ {
		v, err := c.Advance(t.Context(), updateAt(i))
		require.NoError(t, err)
		require.EqualValues(t, i, v, "advance %d commits a version", i)
		if i == travelAt {
			travel = v
		}
	}
	latest, err := c.Read(t.Context())
	require.NoError(t, err)
	old, err := c.ReadAt(t.Context(), travel)
	require.NoError(t, err)
	checkOurs(t, latest)
	t.Logf("control.Read: rows per kind %v (at version %d: %v)", countKinds(oursRows(latest, "")), travel, countKinds(oursRows(old, "")))

	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, advances, snap.Version())
	versionFiles := 0
	for _, f := range snap.Files() {
		if k := f.PartitionValues["kind"]; k != nil && *k == control.KindVersion {
			versionFiles++
		}
	}
	require.Less(t, versionFiles, advances/2, "the version rows were folded")
	fields := snap.Schema().Fields
	columns := make([]string, len(fields))
	types := make([]any, len(fields))
	for i, f := range fields {
		columns[i], types[i] = f.Name, f.Type.String()
	}
	for _, col := range timeColumns {
		require.Contains(t, columns, col)
		require.Equal(t, "timestamp_ntz", types[slices.Index(columns, col)], col)
	}

	// One request per applicable reader API, a few more time travels, and
	// Spark's DESCRIBE TABLE.
	type read struct {
		name    string
		verdict *readers.Verdict
		want    *control.State
		filter  string // only rows of this kind
	}
	var reqs []fulltier.Request
	var reads []read
	verdicts := readers.Verdicts(readers.TableOf(snap.Protocol(), snap.Metadata()))
	for i, a := range readers.APIs {
		v := verdicts[i]
		if v.Outcome == readers.NotApplicable {
			continue
		}
		r := fulltier.Request{Engine: fulltier.Engine(a.Engine), API: a.Call, Path: path}
		rd := read{name: a.ID(), verdict: &verdicts[i], want: latest}
		if a.Filtered {
			r.Predicate = &fulltier.Predicate{Column: "kind", Op: "=", Value: control.KindVersion}
			rd.filter = control.KindVersion
		}
		if a.TimeTravel {
			r.Version = &travel
			rd.want = old
		}
		reqs, reads = append(reqs, r), append(reads, rd)
	}
	for _, e := range []fulltier.Engine{fulltier.DeltaRS, fulltier.DuckDB} {
		reqs = append(reqs, fulltier.Request{Engine: e, Path: path, ReadOptions: fulltier.ReadOptions{Version: &travel}})
		reads = append(reads, read{name: fmt.Sprintf("%s at version %d", e, travel), want: old})
	}
	reqs = append(reqs, fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: path, Statements: []string{"DESCRIBE TABLE {table}"}})
	t.Logf("wrote %d versions in %v", snap.Version()+1, time.Since(start).Round(time.Millisecond))

	res := fulltier.Read(t, reqs...)
	t.Logf("%d reads in %v", len(reqs), time.Since(start).Round(time.Millisecond))
	for i, rd := range reads {
		got := res[i]
		t.Run(rd.name, func(t *testing.T) {
			if rd.verdict != nil {
				require.Equal(t, rd.verdict.API.Version, got.EngineVersion, "the pinned reader versions changed: internal/readers may no longer hold")
				if rd.verdict.Outcome == readers.Refuses {
					require.NotEmpty(t, got.Err, "internal/readers says %s refuses the control table (%s), but it read it", rd.name, rd.verdict.Why)
					for _, frag := range rd.verdict.Refusal {
						require.Contains(t, got.Err, frag, "the known refusal")
					}
					return
				}
			}
			require.Empty(t, got.Err, "%s refuses the control table", rd.name)
			require.Equal(t, columns, got.Columns(), "columns")
			require.Equal(t, types, got.Types(), "types")
			for j, f := range got.Schema {
				if f.Nullable != nil {
					require.Equal(t, fields[j].Nullable, *f.Nullable, "%s nullable", f.Name)
				}
			}
			want := oursRows(rd.want, rd.filter)
			have := readerRows(t, got.Rows)
			require.Equal(t, countKinds(want), countKinds(have), "rows per kind")
			require.Equal(t, want, have, "rows")
		})
	}

	t.Run("DESCRIBE TABLE", func(t *testing.T) {
		got := res[len(reads)]
		require.Empty(t, got.Err)
		desc := map[string]map[string]any{}
		for _, r := range got.Rows {
			name, _ := r["col_name"].(string)
			if name == "" || strings.HasPrefix(name, "#") {
				continue // the partition section's headings
			}
			// The partition column is listed again under "# Partition Information".
			if prev, ok := desc[name]; ok {
				require.Equal(t, prev, r, "%s listed twice, differently", name)
			}
			desc[name] = r
		}
		require.ElementsMatch(t, columns, slices.Collect(maps.Keys(desc)), "DESCRIBE TABLE lists the columns")
		for _, f := range fields {
			comment, _ := desc[f.Name]["comment"].(string)
			require.NotEmpty(t, comment, "%s has a comment", f.Name)
			require.Equal(t, f.Metadata["comment"], comment, "%s: the comment of the schema", f.Name)
		}
		for _, col := range timeColumns {
			require.Equal(t, "timestamp_ntz", desc[col]["data_type"], col)
		}
	})
	t.Logf("done in %v", time.Since(start).Round(time.Millisecond))
}

// clock stamps updated_at: steps of 1.5 s and some nanoseconds, in a zone
// other than UTC.
type clock struct{ t time.Time }

func newClock() *clock {
	return &clock{t: time.Date(2024, 3, 15, 9, 30, 0, 123456789, time.FixedZone("IST", 5*3600+1800))}
}

func (c *clock) now() time.Time {
	c.t = c.t.Add(1500*time.Millisecond + 1001)
	return c.t
}

// pos is the n-th source position.
func pos(n int) codecs.Position {
	var commit, change codecs.LSN
	commit[7], commit[8], commit[9] = byte(n>>16), byte(n>>8), byte(n)
	change = commit
	change[9]++
	return codecs.Position{Commit: commit, Change: change, Serial: int64(n%3 + 1)}
}

// commitAt is the source commit time of position n, in a zone west of UTC
// and with nanoseconds, so that a time kept as wall clock or rounded shows.
func commitAt(n int) time.Time {
	return time.Date(2024, 3, 14, 22, 0, 0, 0, time.FixedZone("EST", -5*3600)).
		Add(time.Duration(n)*time.Second + time.Duration(n)*time.Microsecond + 321)
}

// updateAt is the i-th update: orders complete through 10i each time, lines
// every third time (nothing before), a table and a group with nothing known,
// and the group finalized through the previous update.
func updateAt(i int) control.Update {
	orders := control.Row{Kind: control.KindTable, Name: "sales.dbo.orders", TablePath: "tables/sales/dbo/orders",
		DeltaVersion: int64(2 * i), CompleteThrough: pos(10 * i), CompleteThroughCommit: commitAt(10 * i),
		LastApplied: pos(10*i + 7), LastAppliedCommit: commitAt(10*i + 7), ScanFrom: int64(2*i + 1)}
	lines := control.Row{Kind: control.KindTable, Name: "sales.dbo.lines", TablePath: "tables/sales/dbo/lines",
		DeltaVersion: int64(i), LastApplied: pos(10*i + 3), LastAppliedCommit: commitAt(10*i + 3), ScanFrom: -1}
	if c := 10 * (i - i%3); c > 0 {
		lines.CompleteThrough, lines.CompleteThroughCommit = pos(c), commitAt(c)
	}
	pending := control.Row{Kind: control.KindTable, Name: "sales.dbo.pending", DeltaVersion: -1, ScanFrom: -1}
	u := control.Update{
		Tables: []control.Row{orders, lines, pending},
		Groups: []control.Row{{Kind: control.KindGroup, Name: "idle", DeltaVersion: -1, ScanFrom: -1}},
	}
	if i > 1 {
		c := 10 * (i - 1)
		u.Groups = append(u.Groups, control.Row{Kind: control.KindGroup, Name: "sales", DeltaVersion: -1, ScanFrom: -1,
			CompleteThrough: pos(c), CompleteThroughCommit: commitAt(c), FinalizedUntil: commitAt(c)})
	}
	return u
}

// checkOurs checks that control.Read holds what was advanced, so that the
// readers are compared with the right rows: times as the instants given, to
// the microsecond.
func checkOurs(t *testing.T, st *control.State) {
	t.Helper()
	require.Len(t, st.Tables, 3)
	require.Len(t, st.Groups, 2)
	o := st.Tables["sales.dbo.orders"]
	require.Equal(t, pos(10*advances), o.CompleteThrough)
	require.True(t, commitAt(10*advances).Truncate(time.Microsecond).Equal(o.CompleteThroughCommit), "orders complete_through_commit_ts %v", o.CompleteThroughCommit)
	require.EqualValues(t, 2*advances+1, o.ScanFrom)
	require.True(t, commitAt(10*(advances-1)).Truncate(time.Microsecond).Equal(st.Groups["sales"].FinalizedUntil))
	require.Len(t, st.Versions["sales.dbo.orders"], advances, "a version row per advance of orders")
	require.Len(t, st.Versions["sales.dbo.lines"], advances/3)
	require.Empty(t, st.Versions["sales.dbo.pending"])
	p := st.Tables["sales.dbo.pending"]
	require.Equal(t, control.Row{Kind: control.KindTable, Name: "sales.dbo.pending", DeltaVersion: -1, ScanFrom: -1, UpdatedAt: p.UpdatedAt}, p)
	require.False(t, p.UpdatedAt.IsZero())
}

// oursRows renders the rows of st (of one kind, if kind is set) keyed by
// column, as readerRows renders a reader's: numbers and positions as text,
// times as RFC 3339 in UTC, NULLs as nil; sorted.
func oursRows(st *control.State, kind string) []map[string]any {
	var rows []control.Row
	rows = slices.AppendSeq(rows, maps.Values(st.Tables))
	rows = slices.AppendSeq(rows, maps.Values(st.Groups))
	for _, vs := range st.Versions {
		rows = append(rows, vs...)
	}
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	num := func(n int64) any {
		if n < 0 {
			return nil
		}
		return fmt.Sprint(n)
	}
	position := func(p codecs.Position) any {
		if p == (codecs.Position{}) {
			return nil
		}
		return p.Hex()
	}
	lsn := func(p codecs.Position) any {
		if p == (codecs.Position{}) {
			return nil
		}
		return p.Commit.String()
	}
	ts := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	out := []map[string]any{}
	for _, r := range rows {
		if kind != "" && r.Kind != kind {
			continue
		}
		out = append(out, map[string]any{
			"kind": r.Kind, "name": r.Name, "table_path": str(r.TablePath), "delta_version": num(r.DeltaVersion),
			"complete_through": position(r.CompleteThrough), "complete_through_lsn": lsn(r.CompleteThrough),
			"complete_through_commit_ts": ts(r.CompleteThroughCommit),
			"last_applied":               position(r.LastApplied), "last_applied_commit_ts": ts(r.LastAppliedCommit),
			"scan_from_version": num(r.ScanFrom), "finalized_until": ts(r.FinalizedUntil), "updated_at": ts(r.UpdatedAt),
		})
	}
	sortRows(out)
	return out
}

// readerRows renders a reader's canonical rows as oursRows does: a time
// column's value (timestamp_ntz, or a timestamp with its Z) as the UTC
// instant it names.
func readerRows(t *testing.T, rows []map[string]any) []map[string]any {
	t.Helper()
	out := []map[string]any{}
	for _, r := range rows {
		m := map[string]any{}
		for k, v := range r {
			switch x := v.(type) {
			case nil:
				m[k] = nil
			case json.Number:
				m[k] = x.String()
			case string:
				m[k] = x
				if slices.Contains(timeColumns, k) {
					layout := "2006-01-02T15:04:05.999999"
					if strings.HasSuffix(x, "Z") {
						layout += "Z07:00"
					}
					tm, err := time.ParseInLocation(layout, x, time.UTC)
					require.NoError(t, err, "%s", k)
					m[k] = tm.UTC().Format(time.RFC3339Nano)
				}
			default:
				t.Fatalf("%s: unexpected value %#v", k, v)
			}
		}
		out = append(out, m)
	}
	sortRows(out)
	return out
}

func sortRows(rows []map[string]any) {
	key := func(r map[string]any) string {
		b, _ := json.Marshal(r) // keys in order: kind, name, ...
		return fmt.Sprintf("%v\x00%v\x00%s", r["kind"], r["name"], b)
	}
	slices.SortFunc(rows, func(a, b map[string]any) int { return strings.Compare(key(a), key(b)) })
}

func countKinds(rows []map[string]any) map[string]int {
	n := map[string]int{}
	for _, r := range rows {
		n[fmt.Sprint(r["kind"])]++
	}
	return n
}
