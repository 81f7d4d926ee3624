package fulltier

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDecodeSCD2Rows(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	at := func(s int64) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	scenarios := []SCD2Scenario{{
		Name: "s",
		Events: []SCD2Event{
			{Key: map[string]any{"id": 10}, Op: SCD2Create, Seq: 1, TS: at(1), Row: map[string]any{"x": 1.5}},
			{Key: map[string]any{"id": 2}, Op: SCD2Create, Seq: 2, TS: at(2), Row: map[string]any{"x": 2}},
			{Op: SCD2Truncate, Seq: 3, TS: at(3)},
		},
	}, {Name: "empty", Events: []SCD2Event{{Key: map[string]any{"id": 1}, Op: SCD2Delete, Seq: 1, TS: at(1)}}}}

	out := `{"_oracle_scenario": "s", "id": 10, "x": 1.5, "__START_AT": 1, "__END_AT": 3}
{"_oracle_scenario": "s", "id": 2, "x": 2, "__START_AT": 2, "__END_AT": null}
`
	got, err := decodeSCD2Rows([]byte(out), scenarios)
	require.NoError(t, err)
	end := int64(3)
	endTS := at(3)
	require.Equal(t, map[string][]SCD2Row{
		"s": {
			// Sorted by key value, not by text: 2 before 10.
			{Key: map[string]any{"id": int64(2)}, Columns: map[string]any{"id": int64(2), "x": int64(2)},
				StartSeq: 2, StartTS: at(2)},
			{Key: map[string]any{"id": int64(10)}, Columns: map[string]any{"id": int64(10), "x": 1.5},
				StartSeq: 1, StartTS: at(1), EndSeq: &end, EndTS: &endTS},
		},
		"empty": {},
	}, got)
}

func TestDecodeSCD2RowsErrors(t *testing.T) {
	scenarios := []SCD2Scenario{{Name: "s", Events: []SCD2Event{
		{Key: map[string]any{"id": 1}, Op: SCD2Create, Seq: 1, TS: time.Unix(1, 0), Row: map[string]any{}},
	}}}
	for _, tc := range []struct{ out, want string }{
		{`{"_oracle_scenario": "t", "id": 1, "__START_AT": 1, "__END_AT": null}`, `unknown scenario "t"`},
		{`{"_oracle_scenario": "s", "id": 1, "__START_AT": 7, "__END_AT": null}`, "__START_AT 7 is no event's seq"},
		{`{"_oracle_scenario": "s", "id": 1, "__START_AT": 1, "__END_AT": 9}`, "__END_AT 9 is no event's seq"},
		{`{"_oracle_scenario": "s", "__START_AT": 1, "__END_AT": null}`, "key column id missing"},
		{`{"_oracle_scenario": "s", "id": 1, "__START_AT": "x"}`, "__START_AT x is not a sequence number"},
		{`not json`, "oracle output line 1"},
	} {
		_, err := decodeSCD2Rows([]byte(tc.out), scenarios)
		require.ErrorContains(t, err, tc.want, tc.out)
	}
}

func TestWriteSCD2Input(t *testing.T) {
	dir := t.TempDir()
	events, options := filepath.Join(dir, "e.jsonl"), filepath.Join(dir, "o.json")
	ts := time.Date(2026, 12, 6, 10, 0, 0, 5000, time.FixedZone("x", 3600))
	err := writeSCD2Input(events, options, []SCD2Scenario{{
		Name: "s",
		Events: []SCD2Event{
			{Key: map[string]any{"id": 1}, Op: SCD2Update, Seq: 4, TS: ts, Row: map[string]any{"n": "a"}, Batch: 2},
			{Op: SCD2Truncate, Seq: 5, TS: ts, Batch: 2},
		},
		Options: SCD2Options{TrackHistory: []string{"n"}},
	}})
	require.NoError(t, err)
	body, err := os.ReadFile(events)
	require.NoError(t, err)
	require.Equal(t,
		`{"scenario":"s","batch":2,"key":{"id":1},"op":"u","seq":4,"ts":"2026-12-06T09:00:00.000005Z","row":{"n":"a"}}`+"\n"+
			`{"scenario":"s","batch":2,"op":"t","seq":5,"ts":"2026-12-06T09:00:00.000005Z"}`+"\n",
		string(body))
	var opts map[string]map[string]any
	body, err = os.ReadFile(options)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(body, &opts))
	require.Equal(t, map[string]map[string]any{"s": {"track_history": []any{"n"}}}, opts)
}

func TestWriteSCD2InputRejects(t *testing.T) {
	ts := time.Unix(1, 0)
	for _, tc := range []struct {
		scenarios []SCD2Scenario
		want      string
	}{
		{[]SCD2Scenario{{Name: "s"}}, `scenario "s" has no events`},
		{[]SCD2Scenario{
			{Name: "s", Events: []SCD2Event{{Key: map[string]any{"id": 1}, Op: SCD2Delete, Seq: 1, TS: ts}}},
			{Name: "s", Events: []SCD2Event{{Key: map[string]any{"id": 1}, Op: SCD2Delete, Seq: 1, TS: ts}}},
		}, `scenario "s" given twice`},
		{[]SCD2Scenario{{Name: "s", Events: []SCD2Event{{Op: SCD2Create, Key: map[string]any{"id": 1}, Seq: 1, TS: ts}}}},
			"op c at seq 1 needs a key and a row"},
		{[]SCD2Scenario{{Name: "s", Events: []SCD2Event{{Op: SCD2Truncate, Key: map[string]any{"id": 1}, Seq: 1, TS: ts}}}},
			"op t at seq 1 takes no key and no row"},
		{[]SCD2Scenario{{Name: "s", Events: []SCD2Event{{Op: "x", Seq: 1, TS: ts}}}}, `op "x" at seq 1`},
		{[]SCD2Scenario{{Name: "s", Events: []SCD2Event{{Op: SCD2Delete, Key: map[string]any{"id": 1}, Seq: 1}}}},
			"has no commit time"},
	} {
		dir := t.TempDir()
		err := writeSCD2Input(filepath.Join(dir, "e"), filepath.Join(dir, "o"), tc.scenarios)
		require.Error(t, err)
		require.True(t, strings.Contains(err.Error(), tc.want), "%v does not say %q", err, tc.want)
	}
}
