package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQuickstartDirs(t *testing.T) {
	def, err := filepath.Abs(defaultQuickstartDir)
	require.NoError(t, err)
	abs, err := filepath.Abs("qs")
	require.NoError(t, err)
	for _, tc := range []struct {
		dir, local, tables, wantErr string
	}{
		{dir: "qs", local: abs, tables: filepath.ToSlash(abs) + "/tables"},
		{dir: "abfss://lake@acct1.dfs.core.windows.net/qs/", local: def, tables: "abfss://lake@acct1.dfs.core.windows.net/qs/tables"},
		{dir: "az://lake/qs", local: def, tables: "az://lake/qs/tables"},
		{dir: "s3://lake/qs", local: def, tables: "s3://lake/qs/tables"},
		{dir: "gs://lake/qs", local: def, tables: "gs://lake/qs/tables"},
		{dir: "gs://Lake/qs", wantErr: `--dir: gcsstore: table URL "gs://Lake/qs": bucket: `},
		{dir: "az:///qs", wantErr: `--dir: azstore: "az:///qs": container: missing`},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			local, tables, err := quickstartDirs(tc.dir)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.local, local)
			require.Equal(t, tc.tables, tables)
		})
	}
}
