package deltalog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestH5TmpWriteForCompat(t *testing.T) {
	dir := os.Getenv("H5_TABLE")
	if dir == "" {
		t.Skip()
	}
	s := loadCkptTestStore(t, dir)
	st := ckptStateOf(ckptCommits(t, s, 7))
	var state []Action
	state = append(state, Action{Protocol: st.protocol}, Action{Metadata: st.metadata})
	for _, x := range st.txns {
		state = append(state, Action{Txn: &x})
	}
	for _, a := range st.adds {
		state = append(state, Action{Add: a})
	}
	for _, r := range st.removes {
		state = append(state, Action{Remove: r})
	}
	lc, err := writeCheckpoint(t.Context(), s, 7, state)
	require.NoError(t, err)
	for _, p := range []string{checkpointPath(7), lastCheckpointPath} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), s.files[p], 0o644))
	}
	t.Logf("%+v", lc)
}
