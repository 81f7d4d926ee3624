package merge

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func newCDFSink(t *testing.T, store deltalog.Store, mode Mode, del DeleteMode) *Sink {
	t.Helper()
	s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: mode, DeleteMode: del, EnableChangeDataFeed: true})
	require.NoError(t, err)
	return s
}

// cr builds an expected change row.
func cr(kind string, id int32, name, notes string, price int64, op string, deleted bool) changeRow {
	return changeRow{kind: kind, id: id, item: item{name: name, notes: notes, price: price, op: op, deleted: deleted}}
}

func TestChangeDataFeed(t *testing.T) {
	const (
		ins  = ChangeInsert
		pre  = ChangeUpdatePreimage
		post = ChangeUpdatePostimage
		del  = ChangeDelete
	)
	cases := []struct {
		name    string
		batches [][]ev
		// want is the last commit's change feed in hard-delete mode;
		// wantSoft, when set, in soft-delete mode.
		want, wantSoft []changeRow
		// files says whether the last commit needs change data files.
		files bool
	}{
		{
			name:    "inserts are read from the added files",
			batches: [][]ev{{{op: opC, id: 1, pos: 1, name: "a", price: 100, offset: 0}, {op: opR, id: 2, pos: 2, name: "b", offset: 1}}},
			want:    []changeRow{cr(ins, 1, "a", "", 100, "c", false), cr(ins, 2, "b", "", 0, "r", false)},
		},
		{
			name: "update",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", notes: "n", offset: 0}, {op: opC, id: 2, pos: 2, name: "b", offset: 1}},
				{{op: opU, id: 1, pos: 3, name: "a2", notes: "n2", price: 7, offset: 2}},
			},
			want:  []changeRow{cr(pre, 1, "a", "n", 0, "c", false), cr(post, 1, "a2", "n2", 7, "u", false)},
			files: true,
		},
		{
			name: "delete",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", offset: 0}, {op: opC, id: 2, pos: 2, name: "b", offset: 1}},
				{{op: opD, id: 1, pos: 3, offset: 2}},
			},
			want:     []changeRow{cr(del, 1, "a", "", 0, "c", false)},
			wantSoft: []changeRow{cr(pre, 1, "a", "", 0, "c", false), cr(post, 1, "", "", 0, "d", true)},
			files:    true,
		},
		{
			name: "update and insert in one commit both go to the files",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", offset: 0}},
				{{op: opU, id: 1, pos: 2, name: "a2", offset: 1}, {op: opC, id: 2, pos: 3, name: "b", offset: 2}},
			},
			want:  []changeRow{cr(pre, 1, "a", "", 0, "c", false), cr(post, 1, "a2", "", 0, "u", false), cr(ins, 2, "b", "", 0, "c", false)},
			files: true,
		},
		{
			name: "truncate deletes every live row",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", offset: 0}, {op: opC, id: 2, pos: 2, name: "b", offset: 1}, {op: opC, id: 3, pos: 3, name: "c", offset: 2}},
				{{op: opD, id: 2, pos: 4, offset: 3}, {op: opU, id: 3, pos: 5, name: "c2", offset: 4}},
				{{op: opT, pos: 6, offset: 5}, {op: opC, id: 4, pos: 7, name: "d", offset: 6}},
			},
			want: []changeRow{cr(del, 1, "a", "", 0, "c", false), cr(del, 3, "c2", "", 0, "u", false), cr(ins, 4, "d", "", 0, "c", false)},
			wantSoft: []changeRow{cr(del, 1, "a", "", 0, "c", false), cr(del, 2, "", "", 0, "d", true), cr(del, 3, "c2", "", 0, "u", false),
				cr(ins, 4, "d", "", 0, "c", false)},
			files: true,
		},
		{
			name: "a new key's insert, update and delete in one batch",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", offset: 0}},
				{{op: opC, id: 2, pos: 2, name: "x", offset: 1}, {op: opU, id: 2, pos: 3, name: "y", offset: 2}, {op: opD, id: 2, pos: 4, offset: 3},
					{op: opU, id: 1, pos: 5, name: "a2", offset: 4}},
			},
			want: []changeRow{cr(pre, 1, "a", "", 0, "c", false), cr(post, 1, "a2", "", 0, "u", false)},
			// Soft-delete mode keeps the deleted row, so the table gains it.
			wantSoft: []changeRow{cr(ins, 2, "", "", 0, "d", true), cr(pre, 1, "a", "", 0, "c", false), cr(post, 1, "a2", "", 0, "u", false)},
			files:    true,
		},
		{
			name: "stale events produce nothing",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 5, name: "new", offset: 0}},
				{{op: opU, id: 1, pos: 4, name: "old", offset: 1}, {op: opC, id: 2, pos: 6, name: "b", offset: 2}},
			},
			want: []changeRow{cr(ins, 2, "b", "", 0, "c", false)},
		},
		{
			name: "an unavailable column keeps its stored value in the postimage",
			batches: [][]ev{
				{{op: opC, id: 1, pos: 1, name: "a", notes: "big lob", offset: 0}},
				{{op: opU, id: 1, pos: 2, name: "b", unavailable: true, offset: 1}},
			},
			want:  []changeRow{cr(pre, 1, "a", "big lob", 0, "c", false), cr(post, 1, "b", "big lob", 0, "u", false)},
			files: true,
		},
	}
	for _, tc := range cases {
		for _, mode := range []Mode{ModeDV, ModeCoW} {
			for _, dm := range []DeleteMode{DeleteHard, DeleteSoft} {
				for _, tail := range []int64{-1, DefaultTailFileSize} {
					t.Run(fmt.Sprintf("%s/%s/%s/tail=%d", tc.name, mode, dm, tail), func(t *testing.T) {
						store := newMemStore()
						s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: mode, DeleteMode: dm,
							EnableChangeDataFeed: true, TailFileSize: tail})
						require.NoError(t, err)
						var res Result
						for _, b := range tc.batches {
							var err error
							res, err = s.Apply(t.Context(), batchOf(b...))
							require.NoError(t, err)
							require.True(t, res.Committed)
						}
						want := tc.want
						if dm == DeleteSoft && tc.wantSoft != nil {
							want = tc.wantSoft
						}
						got, files := tableChanges(t, store, res.Version)
						require.ElementsMatch(t, changeStrings(want), changeStrings(got))
						if tail < 0 {
							// A tail that takes new rows is removed, so its commit
							// always has change data files.
							require.Equal(t, tc.files, files > 0, "change data files written")
						}
						for _, a := range commitActions(t, store, res.Version) {
							if a.Add != nil {
								require.True(t, a.Add.DataChange, "adds of a change data commit keep dataChange")
							}
							if a.CommitInfo != nil {
								require.Equal(t, strconv.Itoa(files), a.CommitInfo.OperationMetrics.Text("numTargetChangeFilesAdded"))
							}
						}
					})
				}
			}
		}
	}
}

func TestChangeDataFeedTableSetup(t *testing.T) {
	create := []ev{{op: opC, id: 1, pos: 1, name: "a", offset: 0}}
	update := []ev{{op: opU, id: 1, pos: 2, name: "b", offset: 1}}
	cases := []struct {
		name string
		opts Options
		// plain uses plainLayout (no column mapping).
		plain bool
		// reopen reopens the table with these options before the update.
		reopen *Options
		// alter turns the property on with a SET TBLPROPERTIES commit
		// before the update.
		alter     bool
		wantProto deltalog.Protocol
		wantCDF   bool
	}{
		{
			name: "deletion vectors: the changeDataFeed writer feature",
			opts: Options{EnableChangeDataFeed: true},
			wantProto: deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping", "deletionVectors"},
				WriterFeatures: []string{"changeDataFeed", "columnMapping", "deletionVectors", "invariants"}},
			wantCDF: true,
		},
		{
			name:      "legacy protocol: writer version 4",
			opts:      Options{EnableChangeDataFeed: true, DeletionVectors: new(false)},
			plain:     true,
			wantProto: deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 4},
			wantCDF:   true,
		},
		{
			name:      "the property set through Properties",
			opts:      Options{DeletionVectors: new(false), Properties: map[string]string{deltalog.PropEnableChangeDataFeed: "true"}},
			plain:     true,
			wantProto: deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 4},
			wantCDF:   true,
		},
		{
			name:      "off by default",
			opts:      Options{DeletionVectors: new(false)},
			plain:     true,
			wantProto: deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		},
		{
			name:      "an existing table without the property stays without",
			opts:      Options{DeletionVectors: new(false)},
			plain:     true,
			reopen:    &Options{DeletionVectors: new(false), EnableChangeDataFeed: true},
			wantProto: deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		},
		{
			name:      "a property turned on later is followed",
			opts:      Options{DeletionVectors: new(false)},
			plain:     true,
			alter:     true,
			wantProto: deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 4},
			wantCDF:   true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := newMemStore()
			open := func(o Options) *Sink {
				o.Store, o.TableName = store, "items"
				s, err := Open(t.Context(), o)
				require.NoError(t, err)
				return s
			}
			apply := func(s *Sink, evs []ev) int64 {
				b := batchOf(evs...)
				if tc.plain {
					b = withoutPrice(b)
				}
				res, err := s.Apply(t.Context(), b)
				require.NoError(t, err)
				require.True(t, res.Committed)
				return res.Version
			}
			s := open(tc.opts)
			apply(s, create)
			if tc.reopen != nil {
				s = open(*tc.reopen)
			}
			if tc.alter {
				tbl, err := deltalog.Open(t.Context(), store)
				require.NoError(t, err)
				snap, err := tbl.Snapshot(t.Context())
				require.NoError(t, err)
				meta := snap.Metadata()
				meta.Configuration = map[string]string{deltalog.PropEnableChangeDataFeed: "true"}
				for k, v := range snap.Metadata().Configuration {
					meta.Configuration[k] = v
				}
				proto := deltalog.UpgradeProtocol(snap.Protocol(), deltalog.MinimalProtocol(snap.Schema(), meta.Configuration))
				_, err = tbl.Commit(t.Context(), snap, []deltalog.Action{{Protocol: &proto}, {Metadata: &meta}}, deltalog.Operation{Name: deltalog.OpSetTblProps})
				require.NoError(t, err)
			}
			v := apply(s, update)

			tbl, err := deltalog.Open(t.Context(), store)
			require.NoError(t, err)
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			proto := snap.Protocol()
			require.Equal(t, tc.wantProto.MinReaderVersion, proto.MinReaderVersion)
			require.Equal(t, tc.wantProto.MinWriterVersion, proto.MinWriterVersion)
			require.ElementsMatch(t, tc.wantProto.ReaderFeatures, proto.ReaderFeatures)
			require.ElementsMatch(t, tc.wantProto.WriterFeatures, proto.WriterFeatures)
			require.Equal(t, tc.wantCDF, snap.Metadata().Configuration[deltalog.PropEnableChangeDataFeed] == "true")
			require.Equal(t, tc.wantCDF, proto.HasWriterFeature(deltalog.FeatureChangeDataFeed))

			got, files := tableChanges(t, store, v)
			require.Equal(t, tc.wantCDF, files > 0, "change data files")
			if tc.wantCDF {
				require.Len(t, got, 2)
				require.ElementsMatch(t, []string{ChangeUpdatePreimage, ChangeUpdatePostimage}, []string{got[0].kind, got[1].kind})
			}
		})
	}
}

func TestChangeDataFeedReservedColumn(t *testing.T) {
	layout := &codecs.Layout{SchemaID: 4, Name: "sales.dbo.items.Value", Columns: []codecs.Column{
		{Name: "id", Type: kInt}, {Name: "_change_type", Type: kStr, Nullable: true},
	}}
	rec := Record{TopicPartition: cdctable.TopicPartition{Topic: "sales.dbo.items"}, Change: codecs.Change{
		Op: opC, Table: itemsID, Pos: pos(1), Layout: layout, KeyLayout: itemsKey, KeyIndex: []int{0},
		Key: []any{int32(1)}, Row: []any{int32(1), "x"},
	}}
	for _, cdf := range []bool{true, false} {
		s, err := Open(t.Context(), Options{Store: newMemStore(), TableName: "items", EnableChangeDataFeed: cdf})
		require.NoError(t, err)
		_, err = s.Apply(t.Context(), Batch{Records: []Record{rec}, LastOffsets: map[cdctable.TopicPartition]int64{rec.TopicPartition: 0}})
		if !cdf {
			require.NoError(t, err, "the name is free without a change data feed")
			continue
		}
		require.ErrorIs(t, err, ErrSchema)
		var se *SchemaError
		require.ErrorAs(t, err, &se)
		require.Contains(t, se.Reason, "_change_type")
	}
}
