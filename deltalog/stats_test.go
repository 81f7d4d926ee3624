package deltalog_test

import (
	"encoding/json"
	"fmt"
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
		{`{"numRecords":3,"tightBounds":false,"maxValues":{"s":{"x":"z"}}}`, true, false, 3},
		{`{"numRecords":3,"minValues":{"a":}}`, false, true, 0},
		{`{"numRecords":3,"tightBounds":"no"}`, false, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			st, ok, err := deltalog.ParseStats(tc.in)
			requireSummaryAgrees(t, tc.in)
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

// requireSummaryAgrees checks ParseStatsSummary against ParseStats.
func requireSummaryAgrees(t testing.TB, s string) {
	t.Helper()
	st, ok, err := deltalog.ParseStats(s)
	sum, sumOK, sumErr := deltalog.ParseStatsSummary(s)
	if err != nil {
		require.Error(t, sumErr, "ParseStats refuses %q", s)
		return
	}
	require.NoError(t, sumErr, "%q", s)
	require.Equal(t, ok, sumOK, "%q", s)
	require.Equal(t, deltalog.StatsSummary{NumRecords: st.NumRecords, TightBounds: st.TightBounds}, sum, "%q", s)
}

// FuzzParseStatsSummary compares ParseStatsSummary with ParseStats.
func FuzzParseStatsSummary(f *testing.F) {
	f.Add(`{"numRecords":10,"minValues":{"a":1,"s":{"x":"a<b"}},"nullCount":{"a":0},"tightBounds":false}`)
	f.Add(`{"numRecords":5} trailing`)
	f.Add(` `)
	f.Fuzz(func(t *testing.T, s string) {
		requireSummaryAgrees(t, s)
	})
}

// BenchmarkParseStatsSummary compares the two parsers on the statistics
// of a 12-column file.
//
//	go test ./deltalog -run '^$' -bench ParseStatsSummary
func BenchmarkParseStatsSummary(b *testing.B) {
	cols := map[string]any{}
	for i := range 12 {
		cols[fmt.Sprintf("column_%02d", i)] = fmt.Sprintf("value %d of a column", i)
	}
	s, err := deltalog.Stats{NumRecords: 20_000, MinValues: cols, MaxValues: cols, NullCount: cols}.JSON()
	require.NoError(b, err)
	for _, bc := range []struct {
		name  string
		parse func(string) error
	}{
		{"ParseStatsSummary", func(s string) error { _, _, err := deltalog.ParseStatsSummary(s); return err }},
		{"ParseStats", func(s string) error { _, _, err := deltalog.ParseStats(s); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				if err := bc.parse(s); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "files/s")
		})
	}
}
