package merge

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// readLog reads the change log's rows as "topic/partition/offset op id name
// notes unavailable", sorted.
func readLog(t *testing.T, store deltalog.Store) []string {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	meta, schema := snap.Metadata(), snap.Schema()
	idx := func(name string) int {
		return slices.IndexFunc(schema.Fields, func(f deltalog.StructField) bool { return f.Name == name })
	}
	var out []string
	for _, f := range snap.Files() {
		rows, err := datafile.Read(t.Context(), store, &f, schema, datafile.ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns})
		require.NoError(t, err)
		for _, r := range rows {
			extra := ""
			if i := idx("extra"); i >= 0 {
				extra = fmt.Sprintf(" extra=%v", r[i])
			}
			out = append(out, fmt.Sprintf("%v/%v/%v %v id=%v name=%v notes=%v unavailable=%v%s",
				r[idx(cdctable.LogKafkaTopic)], r[idx(cdctable.LogKafkaPart)], r[idx(cdctable.LogKafkaOffset)], r[idx(cdctable.LogOp)], r[idx("id")], r[idx("name")], r[idx("notes")], r[idx(cdctable.LogUnavailable)], extra))
		}
	}
	slices.Sort(out)
	return out
}

// TestChangeLog: every event is logged once, replays included, with its
// coordinates; a placeholder is NULL and named; a new source column is
// appended to the log's schema.
func TestChangeLog(t *testing.T) {
	store := newMemStore()
	l, err := OpenChangeLog(t.Context(), ChangeLogOptions{Store: store, TableName: "sales/dbo/items_changes"})
	require.NoError(t, err)
	b := batchOf(ev{op: opC, id: 1, pos: 1, name: "a", notes: "n1", offset: 1}, ev{op: opU, id: 1, pos: 2, name: "b", unavailable: true, offset: 2},
		ev{op: opD, id: 2, pos: 3, name: "gone", offset: 5, part: 1})
	v, err := l.Append(t.Context(), b)
	require.NoError(t, err)
	require.EqualValues(t, 0, v)
	v, err = l.Append(t.Context(), b)
	require.NoError(t, err)
	require.EqualValues(t, -1, v, "a replay writes nothing")

	// A new column in the source.
	wide := &codecs.Layout{SchemaID: 9, Name: itemsLayout.Name, Columns: append(slices.Clone(itemsLayout.Columns), codecs.Column{Name: "extra", Type: kStr, Nullable: true})}
	r := ev{op: opU, id: 1, pos: 4, name: "c", notes: "n2", offset: 3}.record()
	r.Change.Layout = wide
	r.Change.Row = append(r.Change.Row, "x")
	_, err = l.Append(t.Context(), Batch{Records: append(slices.Clone(b.Records), r), LastOffsets: map[cdctable.TopicPartition]int64{r.TopicPartition: 3}})
	require.NoError(t, err)

	pos, err := l.Positions(t.Context())
	require.NoError(t, err)
	require.Equal(t, map[cdctable.TopicPartition]int64{{Topic: "sales.dbo.items", Partition: 0}: 3, {Topic: "sales.dbo.items", Partition: 1}: 5}, pos)
	require.Equal(t, []string{
		"sales.dbo.items/0/1 c id=1 name=a notes=n1 unavailable=<nil> extra=<nil>",
		"sales.dbo.items/0/2 u id=1 name=b notes=<nil> unavailable=notes extra=<nil>",
		"sales.dbo.items/0/3 u id=1 name=c notes=n2 unavailable=<nil> extra=x",
		"sales.dbo.items/1/5 d id=2 name=gone notes= unavailable=<nil> extra=<nil>",
	}, readLog(t, store))

	// A column whose type changes cannot be logged in place.
	narrow := &codecs.Layout{SchemaID: 10, Name: itemsLayout.Name, Columns: slices.Clone(wide.Columns)}
	narrow.Columns[4].Type = kInt
	r = ev{op: opU, id: 1, pos: 5, offset: 4}.record()
	r.Change.Layout, r.Change.Row = narrow, append(r.Change.Row, int32(1))
	_, err = l.Append(t.Context(), Batch{Records: []Record{r}, LastOffsets: map[cdctable.TopicPartition]int64{r.TopicPartition: 4}})
	var se *SchemaError
	require.ErrorAs(t, err, &se)
}

// listFailsAfterCommit, when armed, fails the first listing after each
// commit, as a store that lost its connection right after the put would.
// It counts the commits tried.
type listFailsAfterCommit struct {
	deltalog.Store
	armed, fail *atomic.Bool
	puts        *atomic.Int64
}

func (s listFailsAfterCommit) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	err := s.Store.PutIfAbsent(ctx, p, data)
	if strings.HasPrefix(p, "_delta_log/") && strings.HasSuffix(p, ".json") {
		s.puts.Add(1)
		s.fail.Store(err == nil && s.armed.Load())
	}
	return err
}

func (s listFailsAfterCommit) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	if s.fail.CompareAndSwap(true, false) {
		return func(yield func(deltalog.ObjectInfo, error) bool) {
			yield(deltalog.ObjectInfo{}, errors.New("list failed (test)"))
		}
	}
	return s.Store.List(ctx, prefix, startAfter)
}

// TestChangeLogReloadFailure: a reload that fails after a commit that lost a
// race (so Commit returned no snapshot of it) reports the committed version
// with the error. The next append reloads first and commits the next
// version at its first try, as the same table; before, it forgot its
// snapshot and tried to create the log again at version 0.
func TestChangeLogReloadFailure(t *testing.T) {
	mem := newMemStore()
	store := listFailsAfterCommit{mem, new(atomic.Bool), new(atomic.Bool), new(atomic.Int64)}
	l, err := OpenChangeLog(t.Context(), ChangeLogOptions{Store: store, TableName: "sales/dbo/items_changes"})
	require.NoError(t, err)
	v, err := l.Append(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, name: "a", offset: 1}))
	require.NoError(t, err)
	require.EqualValues(t, 0, v)

	// Another writer takes version 1 without touching this log's offsets.
	other, err := deltalog.Open(t.Context(), mem)
	require.NoError(t, err)
	snap, err := other.Snapshot(t.Context())
	require.NoError(t, err)
	_, err = other.Commit(t.Context(), snap, []deltalog.Action{{Txn: &deltalog.Txn{AppID: "other", Version: 1}}}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)

	store.armed.Store(true)
	v, err = l.Append(t.Context(), batchOf(ev{op: opU, id: 1, pos: 2, name: "b", offset: 2}))
	require.ErrorContains(t, err, "list failed (test)")
	require.EqualValues(t, 2, v, "the commit landed before the reload failed")
	store.armed.Store(false)

	v, err = l.Append(t.Context(), batchOf(ev{op: opU, id: 1, pos: 3, name: "c", offset: 3}))
	require.NoError(t, err)
	require.EqualValues(t, 3, v)
	require.EqualValues(t, 4, store.puts.Load(), "one commit tried per append, and one lost to the other writer: none at a version taken")
	tbl, err := deltalog.Open(t.Context(), mem)
	require.NoError(t, err)
	for v := range int64(4) {
		ci, err := tbl.CommitInfo(t.Context(), v)
		require.NoError(t, err)
		require.Equal(t, deltalog.OpWrite, ci.Operation, "version %d", v)
	}
	first, err := tbl.SnapshotAt(t.Context(), 0)
	require.NoError(t, err)
	last, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Equal(t, first.Metadata().ID, last.Metadata().ID, "the same change log, not one created anew")
	require.Equal(t, []string{
		"sales.dbo.items/0/1 c id=1 name=a notes= unavailable=<nil>",
		"sales.dbo.items/0/2 u id=1 name=b notes= unavailable=<nil>",
		"sales.dbo.items/0/3 u id=1 name=c notes= unavailable=<nil>",
	}, readLog(t, mem))
}

// TestChangeLogDeltaEncodings: the log's files encode its strings
// DELTA_BYTE_ARRAY and its integers DELTA_BINARY_PACKED (positions and
// offsets rise event by event), and read back as logged.
func TestChangeLogDeltaEncodings(t *testing.T) {
	store := newMemStore()
	l, err := OpenChangeLog(t.Context(), ChangeLogOptions{Store: store, TableName: "items_changes"})
	require.NoError(t, err)
	var evs []ev
	for i := range 500 {
		evs = append(evs, ev{op: opU, id: int32(i % 50), pos: i + 1, name: fmt.Sprint("n", i), offset: int64(i + 1)})
	}
	_, err = l.Append(t.Context(), batchOf(evs...))
	require.NoError(t, err)
	require.Len(t, readLog(t, store), len(evs))
	snap := l.Snapshot()
	phys := map[string]string{}
	for _, f := range snap.Schema().Fields {
		name, _ := f.Metadata["delta.columnMapping.physicalName"].(string)
		phys[cmp.Or(name, f.Name)] = f.Name
	}
	files := snap.Files()
	require.NotEmpty(t, files)
	for _, add := range files {
		key, err := url.PathUnescape(add.Path)
		require.NoError(t, err)
		rc, err := store.Get(t.Context(), key)
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, rc.Close())
		require.NoError(t, err)
		pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		got := map[string][]format.Encoding{}
		for _, c := range pf.Metadata().RowGroups[0].Columns {
			got[phys[c.MetaData.PathInSchema[0]]] = c.MetaData.Encoding
		}
		require.Contains(t, got[cdctable.LogPosition], format.DeltaByteArray)
		require.Contains(t, got[cdctable.LogOp], format.DeltaByteArray)
		require.Contains(t, got[cdctable.LogKafkaOffset], format.DeltaBinaryPacked)
		require.Contains(t, got[cdctable.LogCommitTime], format.DeltaBinaryPacked)
	}
}
