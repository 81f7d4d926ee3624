package config_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
)

// orderedPairs are the settings validation keeps ordered (low ≤ high), with
// the effective value of each and a range of valid values to set.
var orderedPairs = []struct {
	low, high   string // paths
	get         func(config.Config) (low, high int64)
	lows, highs []string // valid values, as written
	badLow      string   // an invalid value of low
	badHigh     string   // an invalid value of high
	lowDefault  int64    // Default()'s
	highDefault int64    // Default()'s
	parse       func(string) int64
}{
	{
		low: "batch.min_records", high: "batch.max_records",
		get:  func(c config.Config) (int64, int64) { return int64(c.Batch.MinRecords), int64(c.Batch.MaxRecords) },
		lows: []string{"1", "99", "100", "10001", "1000000"}, highs: []string{"1", "50", "100", "10000", "1000000"},
		badLow: "2000000", badHigh: "0", lowDefault: 100, highDefault: 10_000, parse: parseInt,
	},
	{
		low: "batch.max_age", high: "batch.max_delay",
		get:  func(c config.Config) (int64, int64) { return int64(c.Batch.MaxAge), int64(c.Batch.MaxDelay) },
		lows: []string{"1ms", "500ms", "30s", "1h"}, highs: []string{"1ms", "500ms", "30s", "1h"},
		badLow: "2h", badHigh: "2h", lowDefault: int64(time.Second), highDefault: int64(10 * time.Second), parse: parseDuration,
	},
	{
		low: "batch.max_bytes", high: "memory.max_buffered_bytes",
		get:  func(c config.Config) (int64, int64) { return int64(c.Batch.MaxBytes), int64(c.Memory.MaxBufferedBytes) },
		lows: []string{"1", "1MiB", "512MiB", "1GiB"}, highs: []string{"1", "8MiB", "1GiB", "32GiB"},
		badLow: "2GiB", badHigh: "0", lowDefault: 16 << 20, highDefault: 256 << 20, parse: parseBytes,
	},
	{
		low: "maintenance.checkpoint_commits", high: "maintenance.checkpoint_max_commits",
		get: func(c config.Config) (int64, int64) {
			return int64(c.Maintenance.CheckpointCommits), int64(c.Maintenance.CheckpointMaxCommits)
		},
		lows: []string{"1", "5", "200", "1000"}, highs: []string{"1", "5", "50", "10000"},
		badLow: "2000", badHigh: "0", lowDefault: 10, highDefault: 100, parse: parseInt,
	},
}

// TestDerivedDefaults: a file that sets one side of an ordered pair to any
// valid value is accepted, and the side it leaves unset is its default moved
// only as far as the set side requires. A file that sets both out of order is
// refused with a message naming both; a value out of its own bounds is
// reported alone, never against a default.
func TestDerivedDefaults(t *testing.T) {
	for _, p := range orderedPairs {
		for _, v := range p.lows {
			t.Run(p.low+"="+v, func(t *testing.T) {
				c, err := config.Check(pairFile(p.low, v), noEnv, nil)
				require.NoError(t, err)
				low, high := p.get(c)
				require.Equal(t, p.parse(v), low)
				require.Equal(t, max(p.highDefault, low), high, "%s follows %s", p.high, p.low)
			})
		}
		for _, v := range p.highs {
			t.Run(p.high+"="+v, func(t *testing.T) {
				c, err := config.Check(pairFile(p.high, v), noEnv, nil)
				require.NoError(t, err)
				low, high := p.get(c)
				require.Equal(t, p.parse(v), high)
				require.Equal(t, min(p.lowDefault, high), low, "%s follows %s", p.low, p.high)
			})
		}
		for _, bad := range [][2]string{{p.low, p.badLow}, {p.high, p.badHigh}} {
			t.Run(bad[0]+"="+bad[1], func(t *testing.T) {
				_, err := config.Check(pairFile(bad[0], bad[1]), noEnv, nil)
				require.ErrorIs(t, err, config.ErrInvalid)
				require.Len(t, strings.Split(err.Error(), "\n"), 1, err.Error())
				require.True(t, strings.HasPrefix(err.Error(), bad[0]+": "), err.Error())
			})
		}
		t.Run(p.low+">"+p.high, func(t *testing.T) {
			_, err := config.Check(pairFile(p.low, p.lows[len(p.lows)-1], p.high, p.highs[0]), noEnv, nil)
			require.ErrorIs(t, err, config.ErrInvalid)
			require.Len(t, strings.Split(err.Error(), "\n"), 1, err.Error())
			require.ErrorContains(t, err, p.low)
			require.ErrorContains(t, err, p.high)
		})
	}
}

// pairFile is a valid file that also sets each path to its value.
func pairFile(pathValues ...string) []byte {
	sections := map[string][]string{}
	var order []string
	for i := 0; i < len(pathValues); i += 2 {
		section, field, _ := strings.Cut(pathValues[i], ".")
		if sections[section] == nil {
			order = append(order, section)
		}
		sections[section] = append(sections[section], field+": "+pathValues[i+1])
	}
	out := "kafka: {brokers: ['k:1'], group_id: g, topics: [t]}\nschema_registry: {url: 'http://sr'}\n"
	for _, s := range order {
		out += s + ": {" + strings.Join(sections[s], ", ") + "}\n"
	}
	return []byte(out)
}

func parseInt(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

func parseDuration(s string) int64 {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return int64(d)
}

func parseBytes(s string) int64 {
	b, err := config.ParseByteSize(s)
	if err != nil {
		panic(err)
	}
	return int64(b)
}
