package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// A table whose schemaString an older version wrote HTML-escaped ("item
// \u003cid\u003e") takes an older source layout without a metaData commit: the
// schema is the same, and a metaData action would stop streaming readers.
func TestSinkOlderLayoutOnEscapedSchemaCommitsNoMetadata(t *testing.T) {
	store := newMemStore()
	narrow := &codecs.Layout{SchemaID: 5, Name: itemsLayout.Name, Columns: append([]codecs.Column(nil), itemsLayout.Columns...)}
	narrow.Columns[0].Comment = "item <id> & key"
	wide := &codecs.Layout{SchemaID: 6, Name: itemsLayout.Name, Columns: append(append([]codecs.Column(nil), narrow.Columns...),
		codecs.Column{Name: "color", Type: kStr, Nullable: true})}
	r := ev{op: opC, id: 1, pos: 1, name: "a", offset: 0}.record()
	r.Change.Layout, r.Change.Row = wide, append(r.Change.Row, "red")
	_, err := newTestSink(t, store, ModeAuto, DeleteHard).Apply(t.Context(), Batch{Records: []Record{r}})
	require.NoError(t, err)

	// What older versions wrote: the same schema, HTML-escaped.
	tbl, err := deltalog.Open(t.Context(), store)
	require.NoError(t, err)
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	meta := snap.Metadata()
	var esc bytes.Buffer
	json.HTMLEscape(&esc, []byte(meta.SchemaString))
	require.Contains(t, esc.String(), `\u003cid\u003e \u0026 key`)
	meta.SchemaString = esc.String()
	_, err = tbl.Commit(t.Context(), snap, []deltalog.Action{{Metadata: &meta}}, deltalog.Operation{Name: deltalog.OpSetTblProps})
	require.NoError(t, err)

	r = ev{op: opC, id: 2, pos: 2, name: "b", offset: 1}.record()
	r.Change.Layout = narrow
	res, err := newTestSink(t, store, ModeAuto, DeleteHard).Apply(t.Context(), Batch{Records: []Record{r}})
	require.NoError(t, err)
	require.True(t, res.Committed)
	snap, err = tbl.Snapshot(t.Context())
	require.NoError(t, err)
	rc, err := store.Get(t.Context(), fmt.Sprintf("_delta_log/%020d.json", snap.Version()))
	require.NoError(t, err)
	defer rc.Close()
	commit, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.Contains(t, string(commit), `{"add":`, "the precondition: this is the batch's commit")
	for line := range strings.SplitSeq(string(commit), "\n") {
		require.False(t, strings.HasPrefix(line, `{"metaData":`), "the batch commits a metaData action")
	}
}
