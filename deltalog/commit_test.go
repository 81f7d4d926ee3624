package deltalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
	"github.com/cdc2delta/cdc2delta/deltalog/storetest"
	"github.com/cdc2delta/cdc2delta/internal/buildinfo"
)

func TestCommitCreateAndAppend(t *testing.T) {
	ctx := t.Context()
	tbl, st, _ := newMemTable(t)
	_, err := tbl.Snapshot(ctx)
	require.ErrorIs(t, err, deltalog.ErrNotExist)

	snap := createTable(t, tbl, nil)
	require.Equal(t, int64(0), snap.Version())
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, snap.Protocol())
	require.Empty(t, snap.Files())

	res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile("a.parquet"), txnAction("app/0", 41)},
		deltalog.Operation{Name: deltalog.OpWrite, Parameters: map[string]string{"mode": `"Append"`}, Metrics: map[string]string{"numFiles": "1"}})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.Version)
	require.Equal(t, 1, res.FilesAdded)

	// The commit file has commitInfo first, Spark-style.
	rc, err := st.Get(ctx, "_delta_log/00000000000000000001.json")
	require.NoError(t, err)
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	require.Len(t, lines, 3)
	var first map[string]map[string]any
	require.NoError(t, json.Unmarshal(lines[0], &first))
	ci := first["commitInfo"]
	require.Equal(t, "WRITE", ci["operation"])
	require.Equal(t, float64(0), ci["readVersion"])
	require.Equal(t, "Serializable", ci["isolationLevel"])
	require.Equal(t, true, ci["isBlindAppend"])
	require.Equal(t, "cdc2delta/"+buildinfo.Version(), ci["engineInfo"])
	require.NotEmpty(t, ci["txnId"])
	require.Equal(t, map[string]any{"numFiles": "1"}, ci["operationMetrics"])

	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"a.parquet"}, paths(snap.Files()))
	v, ok := snap.TxnVersion("app/0")
	require.True(t, ok)
	require.Equal(t, int64(41), v)
	require.NotNil(t, snap.Txns()["app/0"].LastUpdated, "lastUpdated is always written")
}

func TestCommitValidation(t *testing.T) {
	ntz := &deltalog.StructType{Fields: []deltalog.StructField{{Name: "ts", Type: deltalog.TypeTimestampNTZ, Nullable: true}}}
	spaced := &deltalog.StructType{Fields: []deltalog.StructField{{Name: "Unit Price", Type: deltalog.TypeDouble, Nullable: true}}}
	tests := []struct {
		name    string
		actions func(t *testing.T) []deltalog.Action
		wantErr error
	}{
		{"no metadata", func(t *testing.T) []deltalog.Action {
			return createActions(t, testSchema(), nil)[:1]
		}, deltalog.ErrInvalidCommit},
		{"ntz on legacy protocol", func(t *testing.T) []deltalog.Action {
			a := createActions(t, ntz, nil)
			a[0].Protocol = &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
			return a
		}, deltalog.ErrInvalidCommit},
		{"name needs column mapping", func(t *testing.T) []deltalog.Action {
			return createActions(t, spaced, nil)
		}, deltalog.ErrInvalidCommit},
		{"unknown writer feature", func(t *testing.T) []deltalog.Action {
			a := createActions(t, testSchema(), nil)
			a[0].Protocol = &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"fancyNewThing"}}
			return a
		}, deltalog.ErrUnsupportedFeature},
		{"caller commitInfo", func(t *testing.T) []deltalog.Action {
			return append(createActions(t, testSchema(), nil), deltalog.Action{CommitInfo: &deltalog.CommitInfo{}})
		}, deltalog.ErrInvalidCommit},
		{"duplicate txn", func(t *testing.T) []deltalog.Action {
			return append(createActions(t, testSchema(), nil), txnAction("a", 1), txnAction("a", 2))
		}, deltalog.ErrInvalidCommit},
		{"partition column missing", func(t *testing.T) []deltalog.Action {
			return createActions(t, testSchema(), nil, "nope")
		}, deltalog.ErrInvalidCommit},
		{"ntz with minimal protocol ok", func(t *testing.T) []deltalog.Action {
			return createActions(t, ntz, nil)
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, _, _ := newMemTable(t)
			_, err := tbl.Commit(t.Context(), nil, tc.actions(t), deltalog.Operation{Name: deltalog.OpCreateTable})
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
		})
	}
}

func TestCommitAppendOnly(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	snap := createTable(t, tbl, map[string]string{"delta.appendOnly": "true"})
	_, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile("a.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{removeFile("a.parquet")}, deltalog.Operation{Name: deltalog.OpDelete})
	require.ErrorIs(t, err, deltalog.ErrAppendOnly)
	// Rearranging without data change (compaction) is allowed.
	rm := removeFile("a.parquet")
	rm.Remove.DataChange = false
	add := addFile("b.parquet")
	add.Add.DataChange = false
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{rm, add}, deltalog.Operation{Name: deltalog.OpOptimize})
	require.NoError(t, err)
}

func TestCommitConflicts(t *testing.T) {
	type step struct {
		actions []deltalog.Action
		opts    []deltalog.CommitOption
	}
	tests := []struct {
		name    string
		winner  []deltalog.Action
		loser   step
		wantErr error // nil: the loser is rebased and succeeds at version 3
	}{
		{"blind appends both win", []deltalog.Action{addFile("w.parquet")},
			step{actions: []deltalog.Action{addFile("l.parquet")}}, nil},
		{"append vs merge reading whole table", []deltalog.Action{addFile("w.parquet")},
			step{actions: []deltalog.Action{removeFile("a.parquet"), addFile("l.parquet")}}, deltalog.ErrConcurrentAppend},
		{"blind append allowed under WriteSerializable", []deltalog.Action{addFile("w.parquet")},
			step{actions: []deltalog.Action{removeFile("a.parquet"), addFile("l.parquet")},
				opts: []deltalog.CommitOption{deltalog.Isolation(deltalog.IsolationWriteSerializable)}}, nil},
		{"delete read file", []deltalog.Action{removeFile("a.parquet")},
			step{actions: []deltalog.Action{addFile("l.parquet")}, opts: []deltalog.CommitOption{deltalog.ReadFiles("a.parquet")}},
			deltalog.ErrConcurrentDeleteRead},
		{"delete unrelated file with narrow read set", []deltalog.Action{removeFile("b.parquet")},
			step{actions: []deltalog.Action{removeFile("a.parquet")}, opts: []deltalog.CommitOption{deltalog.ReadFiles("a.parquet")}},
			nil},
		{"delete delete", []deltalog.Action{removeFile("a.parquet")},
			step{actions: []deltalog.Action{removeFile("a.parquet")}, opts: []deltalog.CommitOption{deltalog.ReadFiles("x")}},
			deltalog.ErrConcurrentDeleteDelete},
		{"same txn appId", []deltalog.Action{txnAction("app", 5)},
			step{actions: []deltalog.Action{addFile("l.parquet"), txnAction("app", 6)}}, deltalog.ErrConcurrentTransaction},
		{"different txn appId", []deltalog.Action{txnAction("other", 5)},
			step{actions: []deltalog.Action{addFile("l.parquet"), txnAction("app", 6)}}, nil},
		{"same domain", []deltalog.Action{{DomainMetadata: &deltalog.DomainMetadata{Domain: "d", Configuration: "{}"}}},
			step{actions: []deltalog.Action{{DomainMetadata: &deltalog.DomainMetadata{Domain: "d", Configuration: "{}"}}}},
			deltalog.ErrConcurrentTransaction},
		{"metadata change", nil, step{actions: []deltalog.Action{addFile("l.parquet")}}, deltalog.ErrMetadataChanged},
		{"predicate matches new add", []deltalog.Action{addFile("part=x/w.parquet")},
			step{actions: []deltalog.Action{removeFile("a.parquet")}, opts: []deltalog.CommitOption{
				deltalog.ReadFiles("a.parquet"),
				deltalog.ReadPredicate(func(a *deltalog.Add) bool { return len(a.Path) > 6 && a.Path[:6] == "part=x" }),
			}}, deltalog.ErrConcurrentAppend},
		{"predicate misses new add", []deltalog.Action{addFile("part=y/w.parquet")},
			step{actions: []deltalog.Action{removeFile("a.parquet")}, opts: []deltalog.CommitOption{
				deltalog.ReadFiles("a.parquet"),
				deltalog.ReadPredicate(func(a *deltalog.Add) bool { return len(a.Path) > 6 && a.Path[:6] == "part=x" }),
			}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			tbl, _, _ := newMemTable(t, deltalog.RetryBackoff(0, 0))
			base := createTable(t, tbl, nil)
			_, err := tbl.Commit(ctx, base, []deltalog.Action{addFile("a.parquet"), addFile("b.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
			require.NoError(t, err)
			read, err := tbl.Snapshot(ctx)
			require.NoError(t, err)

			winner := tc.winner
			if winner == nil { // a metadata change
				m := read.Metadata()
				m.Description = "changed"
				winner = []deltalog.Action{{Metadata: &m}}
			}
			res, err := tbl.Commit(ctx, read, winner, deltalog.Operation{Name: deltalog.OpWrite})
			require.NoError(t, err)
			require.Equal(t, int64(2), res.Version)

			res, err = tbl.Commit(ctx, read, tc.loser.actions, deltalog.Operation{Name: deltalog.OpMerge}, tc.loser.opts...)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				ce, ok := errors.AsType[*deltalog.ConflictError](err)
				require.True(t, ok)
				require.Equal(t, int64(2), ce.Version)
				return
			}
			require.NoError(t, err)
			require.Equal(t, int64(3), res.Version)
			require.Equal(t, 1, res.Retries)
		})
	}
}

func TestCommitRetriesExhausted(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t, deltalog.CommitRetries(0))
	base := createTable(t, tbl, nil)
	_, err := tbl.Commit(ctx, base, []deltalog.Action{addFile("w.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	_, err = tbl.Commit(ctx, base, []deltalog.Action{addFile("l.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.ErrorIs(t, err, deltalog.ErrRetriesExhausted)
}

func TestCommitCreateRace(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	createTable(t, tbl, nil)
	_, err := tbl.Commit(ctx, nil, createActions(t, testSchema(), nil), deltalog.Operation{Name: deltalog.OpCreateTable})
	require.ErrorIs(t, err, deltalog.ErrProtocolChanged)
}

// faultTests are the commit fault tests that run against every store, through the
// faultstore wrapper: the in-memory and local stores here, S3 in the integration tier.
var faultTests = []struct {
	name string
	run  func(t *testing.T, st *faultstore.Store)
}{
	{"CommitLostResponse", testCommitLostResponse},
	{"CheckpointFailureDoesNotFailCommit", testCheckpointFailureDoesNotFailCommit},
}

func TestCommitFaults(t *testing.T) {
	stores := []struct {
		name string
		open func(t *testing.T) deltalog.Store
	}{
		{"mem", func(t *testing.T) deltalog.Store { return memstore.New(memstore.Options{}) }},
		{"local", func(t *testing.T) deltalog.Store {
			s, err := localstore.New(localstore.Options{Dir: t.TempDir(), NoSync: true})
			require.NoError(t, err)
			return s
		}},
	}
	for _, st := range stores {
		for _, ft := range faultTests {
			t.Run(st.name+"/"+ft.name, func(t *testing.T) { ft.run(t, faultstore.Wrap(st.open(t))) })
		}
	}
}

func openFaultTable(t *testing.T, st *faultstore.Store, opts ...deltalog.Option) *deltalog.Table {
	t.Helper()
	tbl, err := deltalog.Open(t.Context(), st, append([]deltalog.Option{deltalog.WithClock(newTestClock().Now)}, opts...)...)
	require.NoError(t, err)
	return tbl
}

func testCommitLostResponse(t *testing.T, st *faultstore.Store) {
	ctx := t.Context()
	tbl := openFaultTable(t, st)
	snap := createTable(t, tbl, nil)
	// The put lands but the caller sees an error, as when a response is lost.
	in := st.Inject(faultstore.Fault{Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/00000000000000000001.json", AfterWrite: true, Nth: 1})
	res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile("a.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	require.Equal(t, 1, in.Fired())
	require.Equal(t, int64(1), res.Version)
	// A genuine failure (nothing written) is reported.
	st.Inject(faultstore.Fault{Ops: faultstore.OpPutIfAbsent, Pattern: "_delta_log/00000000000000000002.json", Nth: 1})
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{addFile("b.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.ErrorIs(t, err, faultstore.ErrInjected)
	_, err = storetest.Read(ctx, st.Unwrap(), "_delta_log/00000000000000000002.json")
	require.ErrorIs(t, err, deltalog.ErrNotExist)
}

func testCheckpointFailureDoesNotFailCommit(t *testing.T, st *faultstore.Store) {
	ctx := t.Context()
	tbl := openFaultTable(t, st, deltalog.CheckpointInterval(2))
	snap := createTable(t, tbl, nil)
	in := st.Inject(faultstore.Fault{Ops: faultstore.OpPut, Pattern: "_delta_log/*.checkpoint.parquet"})
	_, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile("a.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile("b.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
	require.Equal(t, int64(2), res.Version)
	require.False(t, res.Checkpointed)
	require.ErrorIs(t, res.CheckpointErr, faultstore.ErrInjected)
	require.Equal(t, 1, in.Fired())
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Len(t, snap.Files(), 2)
}

func TestCommitMetadataChanges(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	snap := createTable(t, tbl, nil)

	// Adding a timestamp_ntz column needs the protocol upgraded in the same commit.
	grown := deltalog.CloneType(snap.Schema()).(*deltalog.StructType)
	grown.Fields = append(grown.Fields, deltalog.StructField{Name: "ts", Type: deltalog.TypeTimestampNTZ, Nullable: true})
	ss, err := grown.SchemaString()
	require.NoError(t, err)
	m := snap.Metadata()
	m.SchemaString = ss
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{{Metadata: &m}}, deltalog.Operation{Name: "ADD COLUMNS"})
	require.ErrorIs(t, err, deltalog.ErrInvalidCommit)

	p := deltalog.UpgradeProtocol(snap.Protocol(), deltalog.MinimalProtocol(grown, m.Configuration))
	res, err := tbl.Commit(ctx, snap, []deltalog.Action{{Protocol: &p}, {Metadata: &m}}, deltalog.Operation{Name: "ADD COLUMNS"})
	require.NoError(t, err)
	snap, err = tbl.SnapshotAt(ctx, res.Version)
	require.NoError(t, err)
	require.True(t, snap.Protocol().HasReaderFeature(deltalog.FeatureTimestampNTZ))
	require.True(t, snap.Protocol().HasWriterFeature(deltalog.FeatureAppendOnly), "legacy features kept when upgrading")

	// Dropping a feature or changing the table id is refused.
	down := deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{{Protocol: &down}}, deltalog.Operation{Name: "X"})
	require.ErrorIs(t, err, deltalog.ErrInvalidCommit)
	m2 := snap.Metadata()
	m2.ID = "other"
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{{Metadata: &m2}}, deltalog.Operation{Name: "X"})
	require.ErrorIs(t, err, deltalog.ErrInvalidCommit)
}

func TestCommitToTableFeaturesWithoutLegacy(t *testing.T) {
	// delta-rs may create (1,7) with an empty writerFeatures list; we must still write.
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	a := createActions(t, testSchema(), nil)
	a[0].Protocol = &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{}}
	_, err := tbl.Commit(ctx, nil, a, deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	m := snap.Metadata()
	m.Description = "now with a description"
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{{Metadata: &m}, addFile("a.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
}

func TestCommitPartitionValuesRequired(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t)
	_, err := tbl.Commit(ctx, nil, createActions(t, testSchema(), nil, "part"), deltalog.Operation{Name: deltalog.OpCreateTable})
	require.NoError(t, err)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{addFile("a.parquet")}, deltalog.Operation{Name: deltalog.OpWrite})
	require.ErrorIs(t, err, deltalog.ErrInvalidCommit)
	ok := addFile("part=__HIVE_DEFAULT_PARTITION__/a.parquet")
	ok.Add.PartitionValues = map[string]*string{"part": nil}
	_, err = tbl.Commit(ctx, snap, []deltalog.Action{ok}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)
}

// TestCommitOperationExtra: Operation.Extra lands in commitInfo as strings,
// Table.CommitInfo and the CommitInfo parser keep it, and a name Commit writes
// itself is refused.
func TestCommitOperationExtra(t *testing.T) {
	ctx := t.Context()
	tbl, st, _ := newMemTable(t)
	snap := createTable(t, tbl, nil)
	extra := map[string]string{"cdc2delta.tombstones": "00000000000000000001.x.json", "other.note": `with "quotes"`}
	res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile("a.parquet")}, deltalog.Operation{Name: deltalog.OpMerge, Extra: extra})
	require.NoError(t, err)

	ci, err := tbl.CommitInfo(ctx, res.Version)
	require.NoError(t, err)
	require.Equal(t, deltalog.OpMerge, ci.Operation)
	require.Equal(t, extra, deltalog.OperationValues(ci.Extra).Texts())
	// Written and parsed again, the fields stay as they were.
	out, err := json.Marshal(ci)
	require.NoError(t, err)
	var back deltalog.CommitInfo
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, ci.Extra, back.Extra)
	require.Equal(t, ci.TxnID, back.TxnID)
	// Snapshots read the commit as before.
	snap, err = tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, res.Version, snap.Version())

	_, err = tbl.CommitInfo(ctx, res.Version+1)
	require.ErrorIs(t, err, deltalog.ErrNotExist)
	require.NoError(t, st.Delete(ctx, "_delta_log/00000000000000000000.json"))
	_, err = tbl.CommitInfo(ctx, 0)
	require.ErrorIs(t, err, deltalog.ErrNotExist, "a commit removed by log cleanup")

	_, err = tbl.Commit(ctx, snap, []deltalog.Action{addFile("b.parquet")}, deltalog.Operation{Name: deltalog.OpWrite, Extra: map[string]string{"txnId": "mine"}})
	require.ErrorIs(t, err, deltalog.ErrInvalidCommit)
}

// TestCommitExactVersion: a commit that must land at the version after its
// read snapshot fails with ErrExist, where it would otherwise be rebased
// past a winner it does not conflict with.
func TestCommitExactVersion(t *testing.T) {
	ctx := t.Context()
	tbl, _, _ := newMemTable(t, deltalog.RetryBackoff(0, 0))
	base := createTable(t, tbl, nil)
	_, err := tbl.Commit(ctx, base, []deltalog.Action{txnAction("other", 5)}, deltalog.Operation{Name: deltalog.OpWrite})
	require.NoError(t, err)

	_, err = tbl.Commit(ctx, base, []deltalog.Action{addFile("l.parquet"), txnAction("app", 6)}, deltalog.Operation{Name: deltalog.OpMerge}, deltalog.ExactVersion())
	require.ErrorIs(t, err, deltalog.ErrExist)
	snap, err := tbl.Snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), snap.Version(), "nothing was committed")

	res, err := tbl.Commit(ctx, snap, []deltalog.Action{addFile("l.parquet"), txnAction("app", 6)}, deltalog.Operation{Name: deltalog.OpMerge}, deltalog.ExactVersion())
	require.NoError(t, err)
	require.Equal(t, int64(2), res.Version)
	require.Zero(t, res.Retries)
}
