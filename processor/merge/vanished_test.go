package merge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/faultstore"
)

// TestOpenWhileAFileIsVacuumed opens a sink whose first read of a data file
// finds it gone: in between, another writer rewrote it (copy-on-write) and
// VACUUM, with a retention shorter than the read, deleted it. The sink reads
// the newer version instead of stopping the table. A file still live in the
// newest version stays an error.
func TestOpenWhileAFileIsVacuumed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rewritten bool // the other writer's commit removed the file
		wantErr   bool
	}{
		{name: "removed by a newer version", rewritten: true},
		{name: "missing from the newest version", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := newMemStore()
			w := newTestSink(t, inner, ModeCoW, DeleteHard)
			_, err := w.Apply(t.Context(), batchOf(ev{op: opC, id: 1, pos: 1, name: "a"}, ev{op: opC, id: 2, pos: 2, name: "b", offset: 1}))
			require.NoError(t, err)
			var file string
			for o, err := range inner.List(t.Context(), "", "") {
				require.NoError(t, err)
				if strings.HasSuffix(o.Path, ".parquet") && !strings.HasPrefix(o.Path, "_delta_log/") {
					file = o.Path
				}
			}
			require.NotEmpty(t, file)

			store := faultstore.Wrap(inner)
			in := store.Inject(faultstore.Fault{Ops: faultstore.OpGet, Pattern: file, Nth: 1,
				Err: fmt.Errorf("get %q: %w", file, deltalog.ErrNotExist),
				Then: func() {
					if tc.rewritten {
						_, err := w.Apply(t.Context(), batchOf(ev{op: opU, id: 1, pos: 3, name: "a2", offset: 2}))
						require.NoError(t, err)
					}
					require.NoError(t, inner.Delete(t.Context(), file))
				}})
			r, err := Open(t.Context(), Options{Store: store, TableName: "items", Mode: ModeCoW, DeleteMode: DeleteHard})
			require.Equal(t, 1, in.Fired())
			if tc.wantErr {
				require.ErrorIs(t, err, deltalog.ErrNotExist)
				return
			}
			require.NoError(t, err)
			_, err = r.Apply(t.Context(), batchOf(ev{op: opU, id: 2, pos: 4, name: "b2", offset: 3}))
			require.NoError(t, err)
			require.Equal(t, map[int32]string{1: "a2", 2: "b2"}, itemNames(t, inner))
		})
	}
}
