package merge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// TestCoWRewrites checks copy-on-write batches across a schema change: files of
// the older schema are rewritten row by row, the others copied value for value
// (datafile.Writer.CopyLive), and after every batch the key index equals a full
// rebuild and the rows equal a model. Batches touch several files at once, so
// rewrites run in parallel.
func TestCoWRewrites(t *testing.T) {
	store := newMemStore()
	s, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: ModeCoW, TargetFileSize: 2 << 10})
	require.NoError(t, err)
	wide := &codecs.Layout{SchemaID: 3, Name: itemsLayout.Name, Columns: append(append([]codecs.Column(nil), itemsLayout.Columns...),
		codecs.Column{Name: "color", Type: kStr, Nullable: true})}
	rng := rand.New(rand.NewPCG(3, 4))
	model := map[int32]string{}
	p, off := 0, int64(-1)
	for batch := range 12 {
		var recs []Record
		for range 60 {
			p++
			off++
			id := int32(rng.IntN(200))
			e := ev{op: opU, id: id, pos: p, name: fmt.Sprintf("n%d", p), price: int64(p), notes: "x", offset: off}
			switch x := rng.IntN(10); {
			case batch == 0 || x < 3:
				e.op = opC
			case x < 4:
				e.op = opD
			}
			r := e.record()
			if batch >= 6 && e.op != opD { // the schema grows a column half way
				r.Change.Layout = wide
				r.Change.Row = append(r.Change.Row, "red")
			}
			recs = append(recs, r)
			if e.op == opD {
				delete(model, id)
			} else {
				model[id] = e.name
			}
		}
		res, err := s.Apply(t.Context(), Batch{Records: recs})
		require.NoError(t, err, "batch %d", batch)
		require.Zero(t, res.DeletionVectors)
		if batch > 0 {
			require.Positive(t, res.FilesRemoved, "batch %d", batch)
		}
		s.mu.Lock()
		requireRebuildEqual(t, s, fmt.Sprintf("batch %d", batch))
		s.mu.Unlock()
		require.Equal(t, model, itemNames(t, store), "batch %d", batch)
	}
	// merge_mode cow never gives a new table the deletion vector feature.
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"},
		WriterFeatures: []string{"columnMapping", "invariants"}}, s.state.proto)
	require.NotContains(t, s.state.meta.Configuration, deltalog.PropEnableDeletionVectors)
}
