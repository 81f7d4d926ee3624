package processor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// rowsOracle checks a completeness claim against the rows of the table
// version it names, read back with deltalog and datafile: the version must
// hold, for every key, what the topic's records at or below the claimed
// position leave it with, or a later change of it. The expected rows come
// from cdcmodel fed those records; nothing is shared with processor/cut.
type rowsOracle struct {
	t        *testing.T
	pl       *pipeline
	recs     map[string][]cdcmodel.Record
	versions map[string]map[int64]*cdcmodel.Version
	models   map[string]map[codecs.Position]map[string]cdcmodel.Row
}

func newRowsOracle(t *testing.T, pl *pipeline, recs map[string][]cdcmodel.Record) *rowsOracle {
	return &rowsOracle{t: t, pl: pl, recs: recs, versions: map[string]map[int64]*cdcmodel.Version{},
		models: map[string]map[codecs.Position]map[string]cdcmodel.Row{}}
}

// check fails the test unless version v of tb holds every change at or
// below through; what names the claim.
func (o *rowsOracle) check(tb *dbzgen.Table, v int64, through codecs.Position, what string) {
	topic, keys := tb.Topic(), tb.Def().Key
	want, ver := o.model(topic, through), o.version(tb, v)
	for k, row := range want {
		p := rowPos(o.t, row)
		if got, ok := ver.Rows[k]; ok {
			require.GreaterOrEqual(o.t, rowPos(o.t, got).Compare(p), 0,
				"%s: %s version %d holds key %s at %s, below the claim's %s", what, topic, v, k, rowPos(o.t, got), p)
			continue
		}
		// Gone: a delete of the key above p must be applied in the version.
		gone := false
		for _, r := range o.recs[topic] {
			off, ok := ver.Txns[cdctable.TopicPartition{Topic: r.Topic, Partition: r.Partition}.AppID()]
			gone = gone || r.Change.Op == codecs.OpDelete && recordKey(r, keys) == k && r.Change.Pos.Compare(p) > 0 && ok && r.Offset <= off
		}
		require.True(o.t, gone, "%s: %s version %d lacks key %s, at %s at or below the claim %s", what, topic, v, k, p, through)
	}
	for k, got := range ver.Rows {
		if _, ok := want[k]; !ok {
			require.Positive(o.t, rowPos(o.t, got).Compare(through),
				"%s: %s version %d holds key %s at %s, which the changes at or below the claim %s delete or never write", what, topic, v, k, rowPos(o.t, got), through)
		}
	}
}

// model is the topic's rows with every record at or below through applied.
func (o *rowsOracle) model(topic string, through codecs.Position) map[string]cdcmodel.Row {
	if o.models[topic] == nil {
		o.models[topic] = map[codecs.Position]map[string]cdcmodel.Row{}
	}
	if rows, ok := o.models[topic][through]; ok {
		return rows
	}
	m := cdcmodel.New(cdcmodel.Options{})
	upTo := map[cdcmodel.TopicPartition]int64{}
	for _, r := range o.recs[topic] {
		upTo[r.TopicPartition] = max(upTo[r.TopicPartition], r.Offset)
		if r.Change.Op != codecs.OpTombstone && r.Change.Pos.Compare(through) <= 0 {
			m.Feed(r)
		}
	}
	m.Commit(upTo)
	rows := m.Rows()
	o.models[topic][through] = rows
	return rows
}

func (o *rowsOracle) version(tb *dbzgen.Table, v int64) *cdcmodel.Version {
	topic := tb.Topic()
	if o.versions[topic] == nil {
		o.versions[topic] = map[int64]*cdcmodel.Version{}
	}
	if ver, ok := o.versions[topic][v]; ok {
		return ver
	}
	ver, err := cdcmodel.ReadVersion(o.t.Context(), o.pl.store(tb), v, tb.Def().Key)
	require.NoError(o.t, err)
	o.versions[topic][v] = ver
	return ver
}

// recordKey renders a record's key as cdcmodel keys rows.
func recordKey(r cdcmodel.Record, keys []string) string {
	row := cdcmodel.Row{}
	if r.Change.KeyLayout != nil {
		for i, col := range r.Change.KeyLayout.Columns {
			row[col.Name] = r.Change.Key[i]
		}
	}
	return cdcmodel.RowKey(row, keys)
}

func rowPos(t *testing.T, row cdcmodel.Row) codecs.Position {
	s, _ := row[cdcmodel.ColPosition].(string)
	p, err := codecs.PositionFromHex(s)
	require.NoError(t, err, "the row's %s", cdcmodel.ColPosition)
	return p
}
