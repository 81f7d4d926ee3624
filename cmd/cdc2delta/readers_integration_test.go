//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/internal/readers"
)

// envUpdateReaders rewrites docs/readers.md and README's reader block from the run.
const envUpdateReaders = "CDC2DELTA_UPDATE_READERS"

// matrixTable is a built reader table and what describe says of it.
type matrixTable struct {
	rt       readerTable
	path     string
	versions []map[int32]matrixRow
	desc     tableDescription
	verdicts []readers.Verdict
	// column is the table column of each source column (portable names).
	column map[string]string
	parts  []string // partition columns, by source name
}

// cell is what one reader API observably did with one table.
type cell struct {
	outcome readers.Outcome
	wrong   readers.WrongKind
	err     string // the refusal, first line
}

// TestReaderMatrix writes every combination of table features of readerTables with
// the MERGE engine and reads each table with every reader API of internal/readers
// (delta-rs to_pandas, to_pyarrow_dataset with a filter, QueryBuilder, load_cdf;
// polars read_delta, scan_delta with a filter; DuckDB delta_scan; Spark read,
// readChangeFeed, VERSION AS OF) in one Python process. Each read must do what
// `cdc2delta describe` says it does: identical rows (the model's), the refusal
// message, or exactly the described wrong rows, so a reader upgrade that starts to
// work, or stops, fails here. The observed matrix must equal docs/readers.md and the
// block of README.md between the readers markers (CDC2DELTA_UPDATE_READERS=1
// rewrites them). Then the recipes of docs/readers.md run on the default table.
func TestReaderMatrix(t *testing.T) {
	start := time.Now()
	root := t.TempDir()
	var tables []*matrixTable
	for _, rt := range readerTables {
		path := filepath.Join(root, rt.dir())
		versions, err := buildReaderTable(t.Context(), path, rt)
		require.NoError(t, err)
		mt := &matrixTable{rt: rt, path: path, versions: versions}
		snap := latestSnapshot(t, path)
		mt.desc = describeSnapshot(path, snap)
		mt.verdicts = readers.Verdicts(readers.TableOf(snap.Protocol(), snap.Metadata()))
		mt.column = map[string]string{}
		for _, f := range snap.Schema().Fields {
			src := f.Name
			if s, ok := f.Metadata["cdc2delta.sourceName"].(string); ok {
				src = s
			}
			mt.column[src] = f.Name
		}
		for _, p := range snap.Metadata().PartitionColumns {
			for src, col := range mt.column {
				if col == p {
					mt.parts = append(mt.parts, src)
				}
			}
		}
		tables = append(tables, mt)
	}
	t.Logf("built %d tables in %v", len(tables), time.Since(start))

	// One request per applicable (table, API).
	type ref struct{ table, api int }
	var reqs []fulltier.Request
	var refs []ref
	for i, mt := range tables {
		for j, a := range readers.APIs {
			if mt.verdicts[j].Outcome == readers.NotApplicable {
				continue
			}
			r := fulltier.Request{Engine: fulltier.Engine(a.Engine), API: a.Call, Path: mt.path}
			if a.Filtered {
				r.Predicate = &fulltier.Predicate{Column: mt.column["id"], Op: ">", Value: 2}
			}
			if a.TimeTravel {
				r.Version = new(int64(1))
			}
			reqs = append(reqs, r)
			refs = append(refs, ref{i, j})
		}
	}
	// The recipes of docs/readers.md run on the default table, in the same
	// process (a Spark recipe's getOrCreate gets the session already started).
	def := tables[0]
	require.Equal(t, "default (deletion vectors, column mapping)", def.rt.name)
	for _, r := range readers.Recipes {
		reqs = append(reqs, fulltier.Request{Engine: fulltier.Engine(r.Engine), API: "recipe", Code: r.Code(def.path)})
	}
	results := fulltier.Read(t, reqs...)
	t.Logf("%d reads in %v", len(reqs), time.Since(start))
	var spark float64
	for _, res := range results {
		if res.Engine == fulltier.Spark {
			spark += res.Seconds
		}
	}
	t.Logf("Spark read for %.1fs", spark)
	for i, r := range readers.Recipes {
		res := results[len(refs)+i]
		require.Empty(t, res.Err, "%s recipe", r.Reader)
		out, _ := res.Rows[0]["output"].(string)
		for _, want := range []string{"name 1 v2", "name 8 v4"} {
			require.Contains(t, out, want, "%s recipe printed:\n%s", r.Reader, out)
		}
	}
	results = results[:len(refs)]

	cells := make([][]cell, len(tables))
	for i, mt := range tables {
		cells[i] = make([]cell, len(readers.APIs))
		for j, v := range mt.verdicts {
			if v.Outcome == readers.NotApplicable {
				cells[i][j] = cell{outcome: readers.NotApplicable}
			}
		}
	}
	for k, res := range results {
		mt, a, v := tables[refs[k].table], readers.APIs[refs[k].api], tables[refs[k].table].verdicts[refs[k].api]
		require.Equal(t, a.Version, res.EngineVersion, "%s: the pinned reader versions changed: update internal/readers and rerun with %s=1", a.ID(), envUpdateReaders)
		c := observe(mt, a, res)
		cells[refs[k].table][refs[k].api] = c
		name := fmt.Sprintf("%s / %s", mt.rt.name, a.ID())
		switch {
		case c.outcome != v.Outcome || c.wrong != v.Wrong:
			t.Errorf("%s: describe says %s %s, the reader did %s %s %s", name, v.Outcome, v.Wrong, c.outcome, c.wrong, c.err)
		case v.Outcome == readers.Refuses:
			for _, frag := range v.Refusal {
				if !strings.Contains(res.Err, frag) {
					t.Errorf("%s: the refusal lacks %q:\n%s", name, frag, res.Err)
				}
			}
		}
	}

	doc, block := renderMatrix(tables, cells)
	checkGenerated(t, filepath.Join("..", "..", "docs", "readers.md"), "", doc)
	checkGenerated(t, filepath.Join("..", "..", "README.md"), "readers", block)

	t.Logf("done in %v", time.Since(start))
}

func latestSnapshot(t *testing.T, path string) *deltalog.Snapshot {
	t.Helper()
	store, err := localstore.New(localstore.Options{Dir: path})
	require.NoError(t, err)
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	return snap
}

// observe says what a read did: refused (an error), read the model's rows, or read
// rows that one of the known wrong reads explains.
func observe(mt *matrixTable, a readers.API, res fulltier.Table) cell {
	if res.Err != "" {
		first, _, _ := strings.Cut(res.Err, "\n")
		return cell{outcome: readers.Refuses, err: first}
	}
	version := len(mt.versions) - 1
	if a.TimeTravel {
		version = 1
	}
	var want []map[string]any
	if a.ChangeFeed {
		want = expectedChanges(mt)
	} else {
		want = expectedRows(mt, mt.versions[version], a.Filtered)
	}
	got := projectRows(mt, res.Rows, a.ChangeFeed)
	switch {
	case jsonEqual(want, got):
		return cell{outcome: readers.Reads}
	case jsonEqual(wrongRows(want, readers.AllNull, mt, a), got):
		return cell{outcome: readers.Wrong, wrong: readers.AllNull}
	case jsonEqual(wrongRows(want, readers.PartitionNull, mt, a), got):
		return cell{outcome: readers.Wrong, wrong: readers.PartitionNull}
	}
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	return cell{outcome: readers.Wrong, wrong: "unexplained rows", err: fmt.Sprintf("want %s, got %s", w, g)}
}

// expectedRows are the source rows of a version as deltaread.py prints them, sorted by
// id, keyed by source column name.
func expectedRows(mt *matrixTable, rows map[int32]matrixRow, filtered bool) []map[string]any {
	out := []map[string]any{}
	for _, id := range sortedIDs(rows) {
		if filtered && id <= 2 {
			continue
		}
		out = append(out, canonicalRow(rows[id]))
	}
	return out
}

// expectedChanges is the change data feed of every version, from the model: inserts
// at version 0, then per version the deleted, inserted and updated (pre- and
// post-image) rows, sorted as projectRows sorts.
func expectedChanges(mt *matrixTable) []map[string]any {
	out := []map[string]any{}
	add := func(r matrixRow, kind string, v int) {
		m := canonicalRow(r)
		m["_change_type"], m["_commit_version"] = kind, json.Number(strconv.Itoa(v))
		out = append(out, m)
	}
	for v, cur := range mt.versions {
		var prev map[int32]matrixRow
		if v > 0 {
			prev = mt.versions[v-1]
		}
		touched := map[int32]bool{}
		for _, c := range matrixVersions[v] {
			touched[c.id] = true
		}
		for id := range touched {
			old, was := prev[id]
			now, is := cur[id]
			switch {
			case was && is:
				add(old, "update_preimage", v)
				add(now, "update_postimage", v)
			case was:
				add(old, "delete", v)
			case is:
				add(now, "insert", v)
			}
		}
	}
	sortRows(out)
	return out
}

// canonicalRow renders model values as deltaread.py does.
func canonicalRow(r matrixRow) map[string]any {
	m := map[string]any{}
	for k, v := range r {
		switch x := v.(type) {
		case int32:
			m[k] = json.Number(strconv.Itoa(int(x)))
		case decimal128.Num:
			m[k] = x.String(2)
		case int64: // timestamp_ntz microseconds
			m[k] = time.UnixMicro(x).UTC().Format("2006-01-02T15:04:05.000000")
		default:
			m[k] = v
		}
	}
	return m
}

// projectRows keys a reader's rows by source column name, keeping the source columns
// (and the change columns of a change data feed), sorted.
func projectRows(mt *matrixTable, rows []map[string]any, changes bool) []map[string]any {
	out := []map[string]any{}
	for _, r := range rows {
		m := map[string]any{}
		for src, col := range mt.column {
			if strings.HasPrefix(src, "_cdc_") {
				continue
			}
			m[src] = r[col]
		}
		if changes {
			m["_change_type"], m["_commit_version"] = r["_change_type"], r["_commit_version"]
		}
		out = append(out, m)
	}
	sortRows(out)
	return out
}

func sortRows(rows []map[string]any) {
	key := func(r map[string]any) string {
		id, _ := r["id"].(json.Number)
		v, _ := r["_commit_version"].(json.Number)
		kind, _ := r["_change_type"].(string)
		return fmt.Sprintf("%08s/%04s/%s/%v", id, v, kind, r)
	}
	slices.SortStableFunc(rows, func(a, b map[string]any) int { return strings.Compare(key(a), key(b)) })
}

// wrongRows is what a reader that reads wrongly in the way kind returns instead of want.
func wrongRows(want []map[string]any, kind readers.WrongKind, mt *matrixTable, a readers.API) []map[string]any {
	out := []map[string]any{}
	if kind == readers.AllNull && a.Filtered {
		return out // nothing matches a filter on nulls
	}
	for _, r := range want {
		m := map[string]any{}
		for k, v := range r {
			switch {
			case kind == readers.AllNull && !strings.HasPrefix(k, "_"):
				m[k] = nil
			case kind == readers.PartitionNull && slices.Contains(mt.parts, k):
				m[k] = nil
			default:
				m[k] = v
			}
		}
		out = append(out, m)
	}
	sortRows(out)
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// checkGenerated compares the generated text with the file (or, with block set,
// with the file's part between "<!-- block:begin -->" and "<!-- block:end -->"),
// rewriting it when CDC2DELTA_UPDATE_READERS is set.
func checkGenerated(t *testing.T, path, block, text string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	have, want := string(data), text
	if block != "" {
		begin, end := "<!-- "+block+":begin -->\n", "<!-- "+block+":end -->"
		i, j := strings.Index(have, begin), strings.Index(have, end)
		require.True(t, i >= 0 && j > i, "%s has no %s block", path, block)
		want = have[:i+len(begin)] + text + have[j:]
	}
	if have == want {
		return
	}
	if os.Getenv(envUpdateReaders) != "" {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		t.Logf("rewrote %s", path)
		return
	}
	t.Errorf("%s is not what the reader matrix produced; regenerate it with\n"+
		"  %s=1 go test -tags integration -run TestReaderMatrix ./cmd/cdc2delta/\n(with the full tier's environment, docs/TESTING.md)", path, envUpdateReaders)
}

// sortedIDs returns the ids of rows in order.
func sortedIDs(rows map[int32]matrixRow) []int32 {
	return slices.Sorted(maps.Keys(rows))
}
