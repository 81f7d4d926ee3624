package fulltier

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// SCD2Op is the operation of an SCD2Event, as Debezium spells it.
type SCD2Op string

// The operations of scripts/py/scd2_oracle.py.
const (
	SCD2Create SCD2Op = "c"
	// SCD2Read is a snapshot read; the oracle treats it as SCD2Create.
	SCD2Read   SCD2Op = "r"
	SCD2Update SCD2Op = "u"
	SCD2Delete SCD2Op = "d"
	// SCD2Truncate closes every open version of the scenario; it has no Key.
	SCD2Truncate SCD2Op = "t"
)

// SCD2Event is one change event of a source table.
type SCD2Event struct {
	// Key holds the primary key columns; nil for SCD2Truncate.
	Key map[string]any
	Op  SCD2Op
	// Seq is the event's place in the total source order. Events share a
	// Seq only when one is a re-delivery of the other.
	Seq int64
	// TS is the source commit time; SCD2Row reports the versions' bounds in
	// it too.
	TS time.Time
	// Row is the after image (the key's columns may be in it too); nil for
	// SCD2Delete and SCD2Truncate.
	Row map[string]any
	// Batch is the microbatch the event arrives in; batches run in
	// ascending order, each as one AutoCDC microbatch.
	Batch int
}

// SCD2Options configures the history of one scenario.
type SCD2Options struct {
	// TrackHistory lists the columns whose change opens a new version
	// (AUTO CDC's TRACK HISTORY ON cols); a change of any other column
	// updates the open version in place. Empty tracks every column.
	TrackHistory []string
	// TrackHistoryExcept lists the columns that do not open a new version
	// (TRACK HISTORY ON * EXCEPT cols). At most one of the two is set.
	TrackHistoryExcept []string
	// Types gives Spark SQL types ("bigint", "double", "string") of columns
	// whose type the values do not show; the rest are inferred: integers
	// bigint, other numbers double, strings string, booleans boolean.
	Types map[string]string
}

// SCD2Scenario is an independent source table for SCD2Scenarios.
type SCD2Scenario struct {
	// Name identifies the scenario in SCD2Result.Histories; unique.
	Name    string
	Events  []SCD2Event
	Options SCD2Options
}

// SCD2Row is one version of a key in a history table.
type SCD2Row struct {
	// Key holds the key columns, Columns every column (the key's too).
	// Integers are int64, other numbers float64, then string, bool or nil.
	Key     map[string]any
	Columns map[string]any
	// StartSeq is the Seq of the event that opened the version, EndSeq the
	// Seq of the event that closed it, nil while it is the current version.
	StartSeq int64
	EndSeq   *int64
	// StartTS and EndTS are the TS of those events.
	StartTS time.Time
	EndTS   *time.Time
}

// SCD2Stats describes an oracle run.
type SCD2Stats struct {
	SparkVersion string
	// SessionSeconds is the time to start Spark (the JVM and the local
	// Spark Connect server), RunSeconds the pipeline run's.
	SessionSeconds float64
	RunSeconds     float64
	// JVMCPUSeconds is the CPU time Spark's JVM used, nil where /proc does
	// not tell; on a shared machine it says more than the wall times.
	JVMCPUSeconds *float64
	// Microbatches holds the microbatches each AutoCDC flow ran, sorted.
	Microbatches []int
}

// SCD2Result is what SCD2Scenarios computed.
type SCD2Result struct {
	// Histories maps a scenario's name to its history rows, sorted by key
	// and StartSeq.
	Histories map[string][]SCD2Row
	Stats     SCD2Stats
}

// scd2OracleTimeout bounds one oracle run: Spark's start and one pipeline
// run on a loaded two-core machine.
const scd2OracleTimeout = 30 * time.Minute

// SCD2Oracle computes the SCD type 2 history of events with Apache Spark's
// AutoCDC (scripts/py/scd2_oracle.py), an oracle independent of cdc2delta.
// Each call starts Spark (tens of seconds); compute many histories in one
// call with SCD2Scenarios.
func SCD2Oracle(t testing.TB, events []SCD2Event, opts SCD2Options) []SCD2Row {
	t.Helper()
	res := SCD2Scenarios(t, SCD2Scenario{Name: "history", Events: events, Options: opts})
	return res.Histories["history"]
}

// SCD2Scenarios computes the histories of independent scenarios in one
// Spark session. It fails the test when the oracle fails or ran a flow's
// batches as fewer microbatches than given.
func SCD2Scenarios(t testing.TB, scenarios ...SCD2Scenario) SCD2Result {
	t.Helper()
	dir := t.TempDir()
	eventsPath := filepath.Join(dir, "events.jsonl")
	optionsPath := filepath.Join(dir, "scenarios.json")
	statsPath := filepath.Join(dir, "stats.json")
	work := filepath.Join(dir, "work")
	if err := writeSCD2Input(eventsPath, optionsPath, scenarios); err != nil {
		t.Fatalf("fulltier: %v", err)
	}
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatalf("fulltier: creating oracle work directory: %v", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), scd2OracleTimeout)
	defer cancel()
	script := filepath.Join(ScriptsDir(t), "scd2_oracle.py")
	cmd := exec.CommandContext(ctx, env(t, EnvAutoCDCPython), script, eventsPath,
		"--jar", env(t, EnvAutoCDCJar), "--work", work,
		"--scenarios", optionsPath, "--stats", statsPath)
	dieWithTest(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fulltier: scd2_oracle.py: %v\nstderr:\n%s", err, tail(stderr.String(), 8000))
	}
	histories, err := decodeSCD2Rows(stdout.Bytes(), scenarios)
	if err != nil {
		t.Fatalf("fulltier: %v\noutput:\n%s", err, tail(stdout.String(), 4000))
	}
	stats, err := readSCD2Stats(statsPath)
	if err != nil {
		t.Fatalf("fulltier: %v", err)
	}
	return SCD2Result{Histories: histories, Stats: stats}
}

type wireSCD2Event struct {
	Scenario string         `json:"scenario"`
	Batch    int            `json:"batch"`
	Key      map[string]any `json:"key,omitempty"`
	Op       SCD2Op         `json:"op"`
	Seq      int64          `json:"seq"`
	TS       string         `json:"ts"`
	Row      map[string]any `json:"row,omitempty"`
}

type wireSCD2Options struct {
	TrackHistory       []string          `json:"track_history,omitempty"`
	TrackHistoryExcept []string          `json:"track_history_except,omitempty"`
	Types              map[string]string `json:"types,omitempty"`
}

func writeSCD2Input(eventsPath, optionsPath string, scenarios []SCD2Scenario) error {
	var events bytes.Buffer
	enc := json.NewEncoder(&events)
	options := make(map[string]wireSCD2Options, len(scenarios))
	for _, s := range scenarios {
		if _, dup := options[s.Name]; dup {
			return fmt.Errorf("writing oracle input: scenario %q given twice", s.Name)
		}
		if len(s.Events) == 0 {
			return fmt.Errorf("writing oracle input: scenario %q has no events", s.Name)
		}
		options[s.Name] = wireSCD2Options(s.Options)
		for i, e := range s.Events {
			if err := checkSCD2Event(e); err != nil {
				return fmt.Errorf("writing oracle input: scenario %q event %d: %w", s.Name, i, err)
			}
			w := wireSCD2Event{Scenario: s.Name, Batch: e.Batch, Key: e.Key, Op: e.Op,
				Seq: e.Seq, TS: e.TS.UTC().Format(time.RFC3339Nano), Row: e.Row}
			if err := enc.Encode(w); err != nil {
				return fmt.Errorf("writing oracle input: scenario %q event %d: %w", s.Name, i, err)
			}
		}
	}
	if err := os.WriteFile(eventsPath, events.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing oracle events: %w", err)
	}
	body, err := json.Marshal(options)
	if err != nil {
		return fmt.Errorf("encoding oracle options: %w", err)
	}
	if err := os.WriteFile(optionsPath, body, 0o644); err != nil {
		return fmt.Errorf("writing oracle options: %w", err)
	}
	return nil
}

func checkSCD2Event(e SCD2Event) error {
	switch e.Op {
	case SCD2Create, SCD2Read, SCD2Update:
		if len(e.Key) == 0 || e.Row == nil {
			return fmt.Errorf("op %s at seq %d needs a key and a row", e.Op, e.Seq)
		}
	case SCD2Delete:
		if len(e.Key) == 0 || e.Row != nil {
			return fmt.Errorf("op d at seq %d needs a key and no row", e.Seq)
		}
	case SCD2Truncate:
		if e.Key != nil || e.Row != nil {
			return fmt.Errorf("op t at seq %d takes no key and no row", e.Seq)
		}
	default:
		return fmt.Errorf("op %q at seq %d is not one of c r u d t", e.Op, e.Seq)
	}
	if e.TS.IsZero() {
		return fmt.Errorf("op %s at seq %d has no commit time", e.Op, e.Seq)
	}
	return nil
}

// The columns scd2_oracle.py adds to each history row.
const (
	scd2ScenarioCol = "_oracle_scenario"
	scd2StartCol    = "__START_AT"
	scd2EndCol      = "__END_AT"
)

// decodeSCD2Rows parses the oracle's JSON lines into each scenario's history,
// naming the key columns and the versions' commit times from its events.
func decodeSCD2Rows(out []byte, scenarios []SCD2Scenario) (map[string][]SCD2Row, error) {
	type scenarioInfo struct {
		keyCols []string
		ts      map[int64]time.Time
	}
	infos := make(map[string]scenarioInfo, len(scenarios))
	histories := make(map[string][]SCD2Row, len(scenarios))
	for _, s := range scenarios {
		info := scenarioInfo{ts: map[int64]time.Time{}}
		for _, e := range s.Events {
			info.ts[e.Seq] = e.TS.UTC()
			for c := range e.Key {
				if !slices.Contains(info.keyCols, c) {
					info.keyCols = append(info.keyCols, c)
				}
			}
		}
		infos[s.Name] = info
		histories[s.Name] = []SCD2Row{}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("oracle output line %d: %w", n, err)
		}
		name, _ := raw[scd2ScenarioCol].(string)
		info, ok := infos[name]
		if !ok {
			return nil, fmt.Errorf("oracle output line %d: unknown scenario %q", n, name)
		}
		row, err := scd2RowOf(raw, info.keyCols, info.ts)
		if err != nil {
			return nil, fmt.Errorf("oracle output line %d (scenario %q): %w", n, name, err)
		}
		histories[name] = append(histories[name], row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading oracle output: %w", err)
	}
	for _, rows := range histories {
		SortSCD2Rows(rows)
	}
	return histories, nil
}

func scd2RowOf(raw map[string]any, keyCols []string, ts map[int64]time.Time) (SCD2Row, error) {
	start, err := seqOf(raw[scd2StartCol])
	if err != nil || start == nil {
		return SCD2Row{}, fmt.Errorf("%s %v is not a sequence number", scd2StartCol, raw[scd2StartCol])
	}
	end, err := seqOf(raw[scd2EndCol])
	if err != nil {
		return SCD2Row{}, fmt.Errorf("%s: %w", scd2EndCol, err)
	}
	row := SCD2Row{Key: map[string]any{}, Columns: map[string]any{}, StartSeq: *start, EndSeq: end}
	for c, v := range raw {
		if c == scd2ScenarioCol || c == scd2StartCol || c == scd2EndCol {
			continue
		}
		row.Columns[c] = plainValue(v)
	}
	for _, c := range keyCols {
		v, ok := row.Columns[c]
		if !ok {
			return SCD2Row{}, fmt.Errorf("key column %s missing", c)
		}
		row.Key[c] = v
	}
	var ok bool
	if row.StartTS, ok = ts[row.StartSeq]; !ok {
		return SCD2Row{}, fmt.Errorf("%s %d is no event's seq", scd2StartCol, row.StartSeq)
	}
	if end != nil {
		endTS, ok := ts[*end]
		if !ok {
			return SCD2Row{}, fmt.Errorf("%s %d is no event's seq", scd2EndCol, *end)
		}
		row.EndTS = &endTS
	}
	return row, nil
}

func seqOf(v any) (*int64, error) {
	if v == nil {
		return nil, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("%v is not a number", v)
	}
	i, err := n.Int64()
	if err != nil {
		return nil, fmt.Errorf("%v is not an integer", v)
	}
	return &i, nil
}

// plainValue turns a json.Number into int64 when it is integral, float64
// otherwise.
func plainValue(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if !strings.ContainsAny(n.String(), ".eE") {
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	f, err := n.Float64()
	if err != nil {
		return n.String()
	}
	return f
}

// SortSCD2Rows sorts history rows by key (column by column, in column name
// order) and then StartSeq, the order SCD2Result holds them in.
func SortSCD2Rows(rows []SCD2Row) {
	sort.SliceStable(rows, func(i, j int) bool {
		if c := compareKeys(rows[i].Key, rows[j].Key); c != 0 {
			return c < 0
		}
		return rows[i].StartSeq < rows[j].StartSeq
	})
}

func compareKeys(a, b map[string]any) int {
	names := make([]string, 0, len(a))
	for c := range a {
		names = append(names, c)
	}
	for c := range b {
		if _, ok := a[c]; !ok {
			names = append(names, c)
		}
	}
	sort.Strings(names)
	for _, c := range names {
		if r := comparePlain(a[c], b[c]); r != 0 {
			return r
		}
	}
	return 0
}

// comparePlain orders nil first, then numbers, strings and booleans; values
// of different kinds by kind.
func comparePlain(a, b any) int {
	ka, kb := plainKind(a), plainKind(b)
	if ka != kb {
		return ka - kb
	}
	switch x := a.(type) {
	case int64, float64:
		fa, fb := asFloat(a), asFloat(b)
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		if x == b.(bool) {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	}
	return 0
}

func plainKind(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case int64, float64:
		return 1
	case string:
		return 2
	case bool:
		return 3
	}
	return 4
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

type wireSCD2Stats struct {
	SparkVersion   string   `json:"spark_version"`
	SessionSeconds float64  `json:"session_seconds"`
	RunSeconds     float64  `json:"run_seconds"`
	JVMCPUSeconds  *float64 `json:"jvm_cpu_seconds"`
	Microbatches   []int    `json:"microbatches"`
}

func readSCD2Stats(path string) (SCD2Stats, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return SCD2Stats{}, fmt.Errorf("reading oracle stats: %w", err)
	}
	var w wireSCD2Stats
	if err := json.Unmarshal(body, &w); err != nil {
		return SCD2Stats{}, fmt.Errorf("decoding oracle stats %s: %w", path, err)
	}
	return SCD2Stats(w), nil
}
