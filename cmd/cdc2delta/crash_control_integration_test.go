//go:build integration

package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/control"
)

// sourceRecord is one record of a table's topic, as the control and change
// log checks need it.
type sourceRecord struct {
	tp     cdctable.TopicPartition
	offset int64
	pos    codecs.Position
	key    string
	op     codecs.Op
}

// readSource reads and decodes every record of the source's topics.
func readSource(t *testing.T, brokers []string, src *crashSource) map[string][]sourceRecord {
	reg, err := codecs.NewRegistry(codecs.RegistryOptions{URLs: []string{src.regURL}})
	require.NoError(t, err)
	dec, err := codecs.NewDecoder(reg, codecs.Options{})
	require.NoError(t, err)
	out := map[string][]sourceRecord{}
	for _, tb := range src.tables {
		want := 0
		for tp, end := range src.endOffsets() {
			if tp.Topic == tb.Topic() {
				want += int(end)
			}
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(tb.Topic()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		require.NoError(t, err)
		n := 0
		for n < want {
			fs := cl.PollFetches(t.Context())
			require.NoError(t, fs.Err())
			fs.EachRecord(func(r *kgo.Record) {
				n++
				ch, err := dec.DecodeRecord(t.Context(), r.Topic, r.Partition, r.Offset, r.Key, r.Value)
				require.NoError(t, err)
				out[tb.Topic()] = append(out[tb.Topic()], sourceRecord{tp: cdctable.TopicPartition{Topic: r.Topic, Partition: r.Partition},
					offset: r.Offset, pos: ch.Pos, key: fmt.Sprint(ch.Key), op: ch.Op})
			})
		}
		cl.Close()
	}
	return out
}

// checkCrashControl checks, after a SIGKILL loop, that no version of the
// control table ever claimed a change its table version did not hold, that
// the group's finalized_until never moved back, and that each table's
// change log holds every record but tombstones exactly once.
func checkCrashControl(t *testing.T, brokers []string, root string, src *crashSource, tables []crashTable) {
	recs := readSource(t, brokers, src)
	tableOf, topicOf := map[string]crashTable{}, map[string]string{}
	for i, tb := range src.tables {
		d := tb.Def()
		name := d.Database + "." + d.Schema + "." + d.Name
		tableOf[name], topicOf[name] = tables[i], tb.Topic()
	}
	store, err := localstore.New(localstore.Options{Dir: filepath.Join(root, "control")})
	require.NoError(t, err)
	ctl, err := control.Open(t.Context(), store, nil)
	require.NoError(t, err)
	latest, err := ctl.Read(t.Context())
	require.NoError(t, err)
	txnsAt := map[string]map[cdctable.TopicPartition]int64{}
	applied := func(name string, v int64) map[cdctable.TopicPartition]int64 {
		k := fmt.Sprint(name, v)
		if m, ok := txnsAt[k]; ok {
			return m
		}
		tbl, err := deltalog.Open(t.Context(), tableOf[name].store())
		require.NoError(t, err)
		snap, err := tbl.SnapshotAt(t.Context(), v)
		require.NoError(t, err)
		m := map[cdctable.TopicPartition]int64{}
		for id, txn := range snap.Txns() {
			if tp, ok := cdctable.ParseAppID(id); ok {
				m[tp] = txn.Version
			}
		}
		txnsAt[k] = m
		return m
	}
	claims := 0
	covered := func(r control.Row) {
		if r.CompleteThrough == (codecs.Position{}) {
			return
		}
		claims++
		txn := applied(r.Name, r.DeltaVersion)
		done := map[string]bool{}
		for _, rec := range recs[topicOf[r.Name]] {
			if rec.op == codecs.OpTombstone || rec.pos.Compare(r.CompleteThrough) > 0 {
				continue
			}
			id := rec.key + rec.pos.String() // a re-delivery is the same change
			done[id] = done[id] || rec.offset <= txn[rec.tp]
		}
		for id, ok := range done {
			require.True(t, ok, "%s row of %s claims complete through %s at version %d, but %s is not applied there", r.Kind, r.Name, r.CompleteThrough, r.DeltaVersion, id)
		}
	}
	var finalized []int64
	for v := int64(1); v <= latest.Version; v++ {
		st, err := ctl.ReadAt(t.Context(), v)
		require.NoError(t, err)
		for _, r := range st.Tables {
			covered(r)
		}
		for _, vs := range st.Versions {
			for _, r := range vs {
				covered(r)
			}
		}
		finalized = append(finalized, st.Groups["all"].FinalizedUntil.UnixMicro())
	}
	require.True(t, slices.IsSorted(finalized), "finalized_until never moves back")
	require.Positive(t, claims)
	t.Logf("control table: %d versions, %d claims checked", latest.Version, claims)

	for name, ct := range tableOf {
		st := ct.changeLog()
		tbl, err := deltalog.Open(t.Context(), st)
		require.NoError(t, err)
		snap, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		meta, schema := snap.Metadata(), snap.Schema()
		col := func(n string) int {
			return slices.IndexFunc(schema.Fields, func(f deltalog.StructField) bool { return f.Name == n })
		}
		got := map[string]int{}
		for _, f := range snap.Files() {
			rows, err := datafile.Read(t.Context(), st, &f, schema, datafile.ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns})
			require.NoError(t, err)
			for _, r := range rows {
				got[fmt.Sprintf("%v/%v", r[col(cdctable.LogKafkaPart)], r[col(cdctable.LogKafkaOffset)])]++
			}
		}
		want := map[string]int{}
		for _, rec := range recs[topicOf[name]] {
			if rec.op != codecs.OpTombstone {
				want[fmt.Sprintf("%d/%d", rec.tp.Partition, rec.offset)]++
			}
		}
		require.Equal(t, want, got, "the change log of %s holds every record once", name)
	}
}
