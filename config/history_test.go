package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/config"
)

// TestHistoryOnly: history takes true, false or only; with only, what
// needs the current-state table is refused by name, with what to do, in
// the block that sets it and in what an override and tables.defaults give
// together.
func TestHistoryOnly(t *testing.T) {
	const base = "kafka: {brokers: [k1:9092], group_id: g, topics: [t]}\nschema_registry: {url: 'http://sr'}\n"
	orders := config.Source{Topic: "t", Database: "sales", Schema: "dbo", Table: "orders"}
	cases := []struct {
		name   string
		tables string
		mode   config.HistoryMode // orders' history when valid
		want   []string           // the problems, each a prefix of one line
	}{
		{name: "off by default", tables: `{}`, mode: config.HistoryOff},
		{name: "true keeps it beside", tables: `{defaults: {history: true}}`, mode: config.HistoryBeside},
		{name: "false", tables: `{defaults: {history: false}}`, mode: config.HistoryOff},
		{name: "only", tables: `{defaults: {history: only, track_history: [price], change_log: true}}`, mode: config.HistoryOnly},
		{name: "only in an override", tables: `{defaults: {history: true, history_path: "{path}_hist"}, overrides: [{name: dbo.orders, history: only}]}`,
			mode: config.HistoryOnly},
		{name: "override back to true", tables: `{defaults: {history: only}, overrides: [{name: dbo.orders, history: true}]}`, mode: config.HistoryBeside},
		{name: "not a mode", tables: `{defaults: {history: instead}}`,
			want: []string{`tables.defaults.history: line 3: "instead" is not true, false or only`}},
		{name: "soft deletes", tables: `{defaults: {history: only, delete_mode: soft}}`,
			want: []string{"tables.defaults.delete_mode: soft flags deleted rows in the current-state table, which history: only does not keep"}},
		{name: "change data feed", tables: `{defaults: {history: only, change_data_feed: true}}`,
			want: []string{"tables.defaults.change_data_feed: a history table has no change data feed"}},
		{name: "partitioned", tables: `{defaults: {history: only, partition_by: [region]}}`,
			want: []string{"tables.defaults.partition_by: a history table is unpartitioned"}},
		{name: "merge mode", tables: `{defaults: {history: only, merge_mode: cow}}`,
			want: []string{"tables.defaults.merge_mode: cow sets how the current-state table is merged"}},
		{name: "history path", tables: `{defaults: {history: only, history_path: "{path}_h"}}`,
			want: []string{"tables.defaults.history_path: is not used with history: only: the history table is the table, at its tables.path"}},
		{name: "history path in the override", tables: `{overrides: [{name: dbo.orders, history: only, history_path: "{path}_h"}]}`,
			want: []string{"tables.overrides[0].history_path: is not used with history: only"}},
		{name: "only from defaults, soft from the override", tables: `{defaults: {history: only}, overrides: [{name: dbo.orders, delete_mode: soft}]}`,
			want: []string{"tables.overrides[0].delete_mode: soft flags deleted rows", "(with what tables.defaults sets)"}},
		{name: "soft from defaults, only from the override", tables: `{defaults: {delete_mode: soft, change_data_feed: true}, overrides: [{name: dbo.orders, history: only}]}`,
			want: []string{"tables.overrides[0].delete_mode: soft flags deleted rows", "tables.overrides[0].change_data_feed: a history table has no change data feed"}},
		{name: "reported once", tables: `{defaults: {history: only, delete_mode: soft}, overrides: [{name: dbo.orders, track_history: [price]}]}`,
			want: []string{"tables.defaults.delete_mode: soft"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Check([]byte(base+"tables: "+tc.tables+"\n"), noEnv, nil)
			if len(tc.want) == 0 {
				require.NoError(t, err)
				require.Equal(t, tc.mode, c.Tables.Settings(orders).History)
				return
			}
			require.Error(t, err)
			lines := strings.Split(err.Error(), "\n")
			require.Len(t, lines, countLines(tc.want), err.Error())
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			for _, l := range lines {
				if !strings.Contains(l, "line 3:") {
					require.Contains(t, l, "history: true", "every refusal says how to keep the table: %s", l)
				}
			}
		})
	}
}

// countLines is how many problems want names: "(with what ...)" continues
// the line before it.
func countLines(want []string) int {
	n := 0
	for _, w := range want {
		if !strings.HasPrefix(w, "(") {
			n++
		}
	}
	return n
}
