package e2ebench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunManyRefusesUsedRoot: a root that holds an earlier run's files is
// refused before anything runs.
func TestRunManyRefusesUsedRoot(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "left"), nil, 0o644))
	_, err := RunMany(t.Context(), ManyConfig{Binary: "cdc2delta", Root: root, Scenario: ScenarioTrickle})
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorContains(t, err, "is not empty")
}

// TestRunEstateRefusesUsedRoot: as RunMany, an estate refuses a root that
// holds an earlier run's files before anything runs.
func TestRunEstateRefusesUsedRoot(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "left"), nil, 0o644))
	_, err := RunEstate(t.Context(), EstateConfig{Binary: "cdc2delta", Root: root})
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorContains(t, err, "is not empty")
}
