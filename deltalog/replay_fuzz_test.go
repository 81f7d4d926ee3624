package deltalog_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// FuzzReplay writes the input, split at "\n---\n", as commit files 0..n-1 and loads the
// table: it must either fail cleanly or produce a consistent snapshot.
func FuzzReplay(f *testing.F) {
	f.Add([]byte(lineProto + "\n" + lineMeta + "\n---\n" +
		`{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}` + "\n" +
		`{"txn":{"appId":"x","version":3}}` + "\n---\n" +
		`{"remove":{"path":"a","deletionTimestamp":1,"dataChange":true}}`))
	f.Add([]byte(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" + lineMeta + "\n---\n" +
		`{"add":{"path":"b%20c","partitionValues":{"p":null},"size":1,"modificationTime":1,"dataChange":true,"deletionVector":{"storageType":"i","pathOrInlineDv":"abc","sizeInBytes":3,"cardinality":1}}}`))
	f.Add([]byte(lineMeta + "\n---\n" + lineProto))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		parts := bytes.Split(data, []byte("\n---\n"))
		if len(parts) > 20 {
			return
		}
		st := memstore.New(memstore.Options{})
		for v, p := range parts {
			require.NoError(t, st.Put(t.Context(), fmt.Sprintf("_delta_log/%020d.json", v), p))
		}
		tbl, err := deltalog.Open(t.Context(), st)
		require.NoError(t, err)
		snap, err := tbl.Snapshot(t.Context())
		if err != nil {
			return
		}
		require.Equal(t, int64(len(parts)-1), snap.Version())
		require.NotNil(t, snap.Schema())
		files := snap.Files()
		require.True(t, slices.IsSortedFunc(files, func(a, b deltalog.Add) int { return strings.Compare(a.Path, b.Path) }))
		require.NoError(t, snap.Protocol().CheckRead())
	})
}
