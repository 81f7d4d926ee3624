package deltatext_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog/deltatext"
)

// Golden strings are spelled out by hand from the protocol's examples, not
// produced by the code under test.
func TestDateGolden(t *testing.T) {
	for _, c := range []struct {
		days int64
		want string
		ok   bool
	}{
		{0, "1970-01-01", true},
		{18878, "2021-09-08", true},
		{-1, "1969-12-31", true},
		{-719162, "0001-01-01", true},
		{2932896, "9999-12-31", true},
		{-719163, "", false}, // 0000-12-31
		{2932897, "", false}, // 10000-01-01
		{1 << 40, "", false},
		{-(1 << 40), "", false},
	} {
		got, ok := deltatext.Date(c.days)
		require.Equal(t, c.ok, ok, "days %d", c.days)
		require.Equal(t, c.want, got, "days %d", c.days)
		if !ok {
			continue
		}
		back, err := deltatext.ParseDate(got)
		require.NoError(t, err)
		require.Equal(t, c.days, back, "round trip of %s", got)
	}
	_, err := deltatext.ParseDate("2021-9-8")
	require.Error(t, err)
}

func TestStatsTimestampGolden(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return v
	}
	for _, c := range []struct {
		in   time.Time
		ntz  bool
		want string
	}{
		{at("2020-02-01T08:09:10Z"), false, "2020-02-01T08:09:10.000Z"},
		{at("2021-11-18T02:30:00.123456Z"), true, "2021-11-18T02:30:00.123"},
		// The instant, not the zone it was given in; microseconds truncated.
		{at("2020-02-01T00:09:10.999999-08:00"), false, "2020-02-01T08:09:10.999Z"},
		// Before 1970 the fraction still truncates toward the earlier millisecond.
		{time.UnixMicro(-1), false, "1969-12-31T23:59:59.999Z"},
		{at("0001-01-01T00:00:00Z"), false, "0001-01-01T00:00:00.000Z"},
		{at("9999-12-31T23:59:59.999999Z"), true, "9999-12-31T23:59:59.999"},
	} {
		got, ok := deltatext.StatsTimestamp(c.in, c.ntz)
		require.True(t, ok)
		require.Equal(t, c.want, got)
	}
	_, ok := deltatext.StatsTimestamp(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), false)
	require.False(t, ok)
	_, ok = deltatext.StatsTimestamp(time.Date(0, 12, 31, 23, 59, 59, 0, time.UTC), true)
	require.False(t, ok)
}

func TestPartitionTimestampRoundTrip(t *testing.T) {
	for _, c := range []struct {
		micros int64
		ntz    bool
		want   string
	}{
		{0, false, "1970-01-01T00:00:00.000000Z"},
		{123456, false, "1970-01-01T00:00:00.123456Z"},
		{1631099471000000, true, "2021-09-08 11:11:11.000000"},
		{-1, true, "1969-12-31 23:59:59.999999"},
		{-62135596800000000, false, "0001-01-01T00:00:00.000000Z"},
		{253402300799999999, true, "9999-12-31 23:59:59.999999"},
	} {
		got, ok := deltatext.PartitionTimestamp(time.UnixMicro(c.micros), c.ntz)
		require.True(t, ok)
		require.Equal(t, c.want, got)
		back, err := deltatext.ParsePartitionTimestamp(got)
		require.NoError(t, err)
		require.Equal(t, c.micros, back.UnixMicro(), "round trip of %s", got)
	}
	_, ok := deltatext.PartitionTimestamp(time.UnixMicro(253402300800000000), false)
	require.False(t, ok, "10000-01-01 has no four-digit year")
}

// Readers must accept every form the protocol allows, including Spark's and
// delta-rs's space-separated one without fraction or zone, read as UTC.
func TestParsePartitionTimestampForms(t *testing.T) {
	want := time.Date(2021, 9, 8, 11, 11, 11, 0, time.UTC)
	for _, s := range []string{
		"2021-09-08 11:11:11",
		"2021-09-08 11:11:11.000000",
		"2021-09-08T11:11:11Z",
		"2021-09-08T11:11:11.000000Z",
		"2021-09-08T13:11:11+02:00",
		"2021-09-08T11:11:11",
		"2021-09-08 11:11:11Z",
	} {
		got, err := deltatext.ParsePartitionTimestamp(s)
		require.NoError(t, err, s)
		require.True(t, want.Equal(got), "%s read as %s", s, got)
	}
	_, err := deltatext.ParsePartitionTimestamp("08/09/2021")
	require.Error(t, err)
	require.False(t, errors.Is(err, deltatext.ErrRange))
}

// A stats bound reads back as the instant it was written from, truncated to the
// millisecond, whatever offset Spark's session time zone gave it.
func TestStatsTimestampRoundTrip(t *testing.T) {
	for _, c := range []struct {
		in  string
		ntz bool
	}{
		{"2020-02-01T08:09:10.000Z", false},
		{"0001-01-01T00:00:00.000Z", false},
		{"9999-12-31T23:59:59.999", true},
		{"1969-12-31T23:59:59.999", true},
	} {
		ts, err := deltatext.ParseStatsTimestamp(c.in, c.ntz)
		require.NoError(t, err, c.in)
		back, ok := deltatext.StatsTimestamp(ts, c.ntz)
		require.True(t, ok)
		require.Equal(t, c.in, back)
	}
	spark, err := deltatext.ParseStatsTimestamp("2020-02-01T00:09:10.000-08:00", false)
	require.NoError(t, err)
	require.Equal(t, time.Date(2020, 2, 1, 8, 9, 10, 0, time.UTC).UnixMicro(), spark.UnixMicro())
	_, err = deltatext.ParseStatsTimestamp("2020-02-01T08:09:10.000", false)
	require.Error(t, err, "a timestamp bound without a zone is not an instant")
	_, err = deltatext.ParseStatsTimestamp("2020-02-01T08:09:10.000Z", true)
	require.Error(t, err, "a timestamp_ntz bound has no zone")
}
