package cdctable

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppID(t *testing.T) {
	tp := TopicPartition{Topic: "sales.dbo.orders", Partition: 3}
	require.Equal(t, "cdc2delta/sales.dbo.orders/3", tp.AppID())
	require.Equal(t, "sales.dbo.orders/3", tp.TagName())
	got, ok := ParseAppID(tp.AppID())
	require.True(t, ok)
	require.Equal(t, tp, got)
}

// FuzzParseAppID checks that ParseAppID inverts TopicPartition.AppID and
// never panics.
func FuzzParseAppID(f *testing.F) {
	f.Add("cdc2delta/sales.dbo.orders/3")
	f.Add("cdc2delta//1")
	f.Add("cdc2delta/a/b/-7")
	f.Add("other/x/1")
	f.Fuzz(func(t *testing.T, id string) {
		tp, ok := ParseAppID(id)
		if !ok {
			return
		}
		require.Equal(t, tp, mustParse(t, tp.AppID()))
	})
}

func mustParse(t *testing.T, id string) TopicPartition {
	tp, ok := ParseAppID(id)
	require.True(t, ok, id)
	return tp
}

func TestGroupMeta(t *testing.T) {
	require.Equal(t, "cdc2delta:v=12", GroupMeta(12))
	require.True(t, IsGroupMeta(GroupMeta(0)))
	require.False(t, IsGroupMeta(""))
	require.False(t, IsGroupMeta("cdc2delta"))
}
