package deltalog_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestStatsRoundTrip(t *testing.T) {
	tight := false
	in := deltalog.Stats{
		NumRecords:  10,
		MinValues:   map[string]any{"a": 1, "s": map[string]any{"x": "a<b"}, "d": "12345678901234567890.123456789012345678"},
		MaxValues:   map[string]any{"a": 9, "s": map[string]any{"x": "z"}},
		NullCount:   map[string]any{"a": 0, "s": map[string]any{"x": 3}},
		TightBounds: &tight,
	}
	s, err := in.JSON()
	require.NoError(t, err)
	require.Contains(t, s, `"a<b"`, "no HTML escaping, like Spark")
	require.JSONEq(t, `{"numRecords":10,"minValues":{"a":1,"s":{"x":"a<b"},"d":"12345678901234567890.123456789012345678"},
		"maxValues":{"a":9,"s":{"x":"z"}},"nullCount":{"a":0,"s":{"x":3}},"tightBounds":false}`, s)

	out, ok, err := deltalog.ParseStats(s)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(10), out.NumRecords)
	require.Equal(t, json.Number("1"), out.MinValues["a"], "numbers stay exact")
	require.False(t, *out.TightBounds)
}

func TestParseStats(t *testing.T) {
	tests := []struct {
		in      string
		ok      bool
		wantErr bool
		n       int64
	}{
		{"", false, false, 0},
		{`{"numRecords":5}`, true, false, 5},
		{`{"numRecords":9223372036854775807,"minValues":{}}`, true, false, 9223372036854775807},
		{`{"numRecords":1.5}`, false, true, 0},
		{`{"numRecords":-1}`, false, true, 0},
		{`{"numRecords":`, false, true, 0},
		{`{"minValues":{"a":1}}`, true, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			st, ok, err := deltalog.ParseStats(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.n, st.NumRecords)
		})
	}
}
