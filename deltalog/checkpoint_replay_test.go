package deltalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/memstore"
)

// TestCheckpointEqualsJSONReplay loads each fixture table twice, once starting from its
// newest checkpoint and once from its JSON commits only (checkpoints hidden), and
// requires the same state.
func TestCheckpointEqualsJSONReplay(t *testing.T) {
	var tables []string
	for _, pattern := range []string{"testdata/checkpoints/*/_delta_log", "testdata/tables/*/_delta_log"} {
		m, err := filepath.Glob(pattern)
		require.NoError(t, err)
		tables = append(tables, m...)
	}
	for _, logDir := range tables {
		root := filepath.Dir(logDir)
		t.Run(root, func(t *testing.T) {
			ctx := t.Context()
			entries, err := os.ReadDir(logDir)
			require.NoError(t, err)
			jsonOnly, withCP := memstore.New(memstore.Options{}), memstore.New(memstore.Options{})
			hasCP, hasAllJSON := false, false
			for _, e := range entries {
				if e.IsDir() {
					continue
				}
				data, err := os.ReadFile(filepath.Join(logDir, e.Name()))
				require.NoError(t, err)
				p := "_delta_log/" + e.Name()
				if strings.Contains(e.Name(), ".checkpoint.") || e.Name() == "_last_checkpoint" {
					hasCP = true
					require.NoError(t, withCP.Put(ctx, p, data))
					continue
				}
				if e.Name() == "00000000000000000000.json" {
					hasAllJSON = true
				}
				require.NoError(t, jsonOnly.Put(ctx, p, data))
				require.NoError(t, withCP.Put(ctx, p, data))
			}
			if !hasCP || !hasAllJSON {
				t.Skip("needs both a checkpoint and the full JSON history")
			}
			// Replay starts from the newest checkpoint when one exists.
			cpTbl, err := deltalog.Open(ctx, withCP)
			require.NoError(t, err)
			viaCP, err := cpTbl.Snapshot(ctx)
			require.NoError(t, err)
			jsTbl, err := deltalog.Open(ctx, jsonOnly)
			require.NoError(t, err)
			viaJSON, err := jsTbl.Snapshot(ctx)
			require.NoError(t, err)

			require.Equal(t, viaJSON.Version(), viaCP.Version())
			require.True(t, viaJSON.Protocol().Equal(viaCP.Protocol()))
			require.Equal(t, viaJSON.Metadata(), viaCP.Metadata())
			require.Equal(t, viaJSON.Txns(), viaCP.Txns())
			require.Equal(t, viaJSON.DomainMetadata(), viaCP.DomainMetadata())
			a, b := viaJSON.Files(), viaCP.Files()
			require.Equal(t, paths(a), paths(b))
			for i := range a {
				require.Equal(t, a[i].Size, b[i].Size, a[i].Path)
				require.Equal(t, a[i].PartitionValues, b[i].PartitionValues, a[i].Path)
				require.Equal(t, a[i].DeletionVector, b[i].DeletionVector, a[i].Path)
				sa, _, err := deltalog.ParseStats(a[i].Stats)
				require.NoError(t, err)
				sb, _, err := deltalog.ParseStats(b[i].Stats)
				require.NoError(t, err)
				require.Equal(t, sa.NumRecords, sb.NumRecords, a[i].Path)
			}
		})
	}
}
