package merge

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
)

func TestOpValue(t *testing.T) {
	for _, op := range []codecs.Op{codecs.OpCreate, codecs.OpUpdate, codecs.OpDelete, codecs.OpRead,
		codecs.OpTruncate, codecs.OpTombstone, codecs.Op('x')} {
		require.Equal(t, any(string(op)), opValue(op))
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = opValue(codecs.OpUpdate) }))
}
