package merge_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
)

// An oracle script is a run written out so that it replays without the
// generator: a failing run saves one, and TestOracleReplay plays it back
// through the same checks. It is JSON lines, each object one of:
//
//	{"header": {...}}                 the table's options (first line)
//	{"source": {"schema":1,"rows":[...]}}  the source's final rows
//	{"batch": [record, ...]}          a micro-batch as first cut, in order
//	{"decision": {"what":"crash","value":1}}  a decision drawn during the run
//
// A record holds the partition, offset and the change (op, position, key,
// row aligned with the schema's columns; binary as base64, decimals as
// their unscaled integer). The decisions are every draw the run makes after
// the batches are cut (faults injected, crashes, re-splits of a failed
// batch and replays of an applied one, how the log is read), in the order
// drawn; a replay takes them from the script instead of the generator, so
// the engine sees the same calls and the same store faults. The engine
// runs on one goroutine against the in-memory store, so a replay is exact.

// oracleScriptsEnv names the directory failing runs save their scripts in;
// unset, a new directory under the system's temporary one, which the test
// does not remove.
const (
	oracleScriptsEnv = "CDC2DELTA_ORACLE_SCRIPTS"
	oracleReplayEnv  = "CDC2DELTA_ORACLE_REPLAY"
)

// errScriptMismatch reports a script whose decisions do not fit the run
// that plays it: the oracle's code changed since the script was saved.
var errScriptMismatch = errors.New("oracle script does not fit this oracle")

type scriptHeader struct {
	Seed            uint64 `json:"seed"` // the generator's seed, for reference only
	Soft            bool   `json:"soft"`
	CoW             bool   `json:"cow"`
	Partitioned     bool   `json:"partitioned"`
	Snapshot        bool   `json:"snapshot"`
	TargetFileSize  int64  `json:"targetFileSize"`
	CheckpointEvery int    `json:"checkpointEvery"`
	MaxBatch        int    `json:"maxBatch"`
	Tail            int64  `json:"tail"`
	IndexOnDisk     bool   `json:"indexOnDisk"`
	IndexKeys       int    `json:"indexKeys"`
}

type scriptSource struct {
	Schema int                 `json:"schema"`
	Rows   [][]json.RawMessage `json:"rows"`
}

type scriptRecord struct {
	Partition    int32             `json:"partition"`
	Offset       int64             `json:"offset"`
	Op           string            `json:"op"`
	Table        codecs.TableID    `json:"table"`
	Pos          codecs.Position   `json:"pos"`
	CommitMillis int64             `json:"commitMillis,omitempty"`
	Schema       int               `json:"schema,omitempty"` // 0: no row
	Row          []json.RawMessage `json:"row,omitempty"`
	Unavailable  []int             `json:"unavailable,omitempty"`
	Key          []int32           `json:"key,omitempty"`
	KeyIndex     []int             `json:"keyIndex,omitempty"`
}

type scriptDecision struct {
	What  string `json:"what"`
	Value int    `json:"value"`
}

type scriptLine struct {
	Header   *scriptHeader   `json:"header,omitempty"`
	Source   *scriptSource   `json:"source,omitempty"`
	Batch    []scriptRecord  `json:"batch,omitempty"`
	Decision *scriptDecision `json:"decision,omitempty"`
}

// oracleScript is a run's input and the decisions drawn or to replay.
type oracleScript struct {
	header    scriptHeader
	src       *source // rows and layout only
	batches   [][]cdcmodel.Record
	decisions []scriptDecision
}

// errScriptEnd ends a replay at the point where the run it was saved from
// stopped: a failed run's script holds the decisions up to its failure.
var errScriptEnd = errors.New("oracle script ends")

// tape hands out a run's decisions: drawn from the generator and kept
// when recording, taken from the script when replaying.
type tape struct {
	t      testing.TB
	replay []scriptDecision // nil when recording
	drawn  []scriptDecision
}

func (tp *tape) take(what string, draw func() int) int {
	if tp.replay == nil {
		v := draw()
		tp.drawn = append(tp.drawn, scriptDecision{what, v})
		return v
	}
	n := len(tp.drawn)
	if n >= len(tp.replay) {
		panic(errScriptEnd) // replayOracle recovers it
	}
	d := tp.replay[n]
	if d.What != what {
		tp.t.Fatalf("%v: decision %d is %q in the script, the run asks for %q", errScriptMismatch, n, d.What, what)
	}
	tp.drawn = append(tp.drawn, d)
	return d.Value
}

func (tp *tape) intN(src *rand.Rand, what string, n int) int {
	v := tp.take(what, func() int { return src.IntN(n) })
	if v < 0 || v >= n {
		tp.t.Fatalf("%v: decision %d (%s) is %d, not in [0, %d)", errScriptMismatch, len(tp.drawn)-1, what, v, n)
	}
	return v
}

func (tp *tape) chance(src *rand.Rand, what string, p float64) bool {
	return tp.take(what, func() int {
		if src.Float64() < p {
			return 1
		}
		return 0
	}) == 1
}

// save writes the script to dir and returns its path.
func (s *oracleScript) save(dir string) (string, error) {
	f, err := os.CreateTemp(dir, fmt.Sprintf("oracle-seed%d-*.jsonl", s.header.Seed))
	if err != nil {
		return "", err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	err = errors.Join(enc.Encode(scriptLine{Header: &s.header}), enc.Encode(scriptLine{Source: encodeSource(s.src)}))
	for _, b := range s.batches {
		recs := make([]scriptRecord, len(b))
		for i, r := range b {
			recs[i] = encodeRecord(r)
		}
		err = errors.Join(err, enc.Encode(scriptLine{Batch: recs}))
	}
	for _, d := range s.decisions {
		err = errors.Join(err, enc.Encode(scriptLine{Decision: &d}))
	}
	err = errors.Join(err, w.Flush(), f.Close())
	return f.Name(), err
}

// loadOracleScript reads a script saved by save.
func loadOracleScript(path string) (*oracleScript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &oracleScript{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var l scriptLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("oracle script %s line %d: %w", path, n, err)
		}
		switch {
		case l.Header != nil:
			s.header = *l.Header
		case l.Source != nil:
			if s.src, err = decodeSource(l.Source); err != nil {
				return nil, fmt.Errorf("oracle script %s line %d: %w", path, n, err)
			}
		case l.Batch != nil:
			b := make([]cdcmodel.Record, len(l.Batch))
			for i, r := range l.Batch {
				if b[i], err = decodeRecord(r); err != nil {
					return nil, fmt.Errorf("oracle script %s line %d record %d: %w", path, n, i, err)
				}
			}
			s.batches = append(s.batches, b)
		case l.Decision != nil:
			s.decisions = append(s.decisions, *l.Decision)
		default:
			return nil, fmt.Errorf("oracle script %s line %d: no header, source, batch or decision", path, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("oracle script %s: %w", path, err)
	}
	if s.src == nil {
		return nil, fmt.Errorf("oracle script %s: no source line", path)
	}
	return s, nil
}

func (h scriptHeader) config() oracleConfig {
	return oracleConfig{soft: h.Soft, cow: h.CoW, partitioned: h.Partitioned, snapshot: h.Snapshot,
		targetFileSize: h.TargetFileSize, checkpointEvery: h.CheckpointEvery, maxBatch: h.MaxBatch}
}

func layoutOf(schema int) (*codecs.Layout, error) {
	switch schema {
	case 0:
		return nil, nil
	case int(oracleV1.SchemaID):
		return oracleV1, nil
	case int(oracleV2.SchemaID):
		return oracleV2, nil
	}
	return nil, fmt.Errorf("no oracle schema %d", schema)
}

func schemaOf(l *codecs.Layout) int {
	if l == nil {
		return 0
	}
	return int(l.SchemaID)
}

func encodeSource(s *source) *scriptSource {
	out := &scriptSource{Schema: schemaOf(s.layout)}
	for _, id := range sortedKeys(s.rows) {
		row := make([]any, len(s.layout.Columns))
		for i, c := range s.layout.Columns {
			row[i] = s.rows[id][c.Name]
		}
		out.Rows = append(out.Rows, encodeRow(row))
	}
	return out
}

func decodeSource(s *scriptSource) (*source, error) {
	l, err := layoutOf(s.Schema)
	if err != nil || l == nil {
		return nil, fmt.Errorf("source: %w", errors.Join(err, errors.New("source without a schema")))
	}
	out := &source{layout: l, rows: map[int32]map[string]any{}}
	for _, enc := range s.Rows {
		vals, err := decodeRow(l, enc)
		if err != nil {
			return nil, fmt.Errorf("source: %w", err)
		}
		row := map[string]any{}
		for i, c := range l.Columns {
			row[c.Name] = vals[i]
		}
		out.rows[vals[0].(int32)] = row
	}
	return out, nil
}

func encodeRecord(r cdcmodel.Record) scriptRecord {
	c := r.Change
	out := scriptRecord{Partition: r.Partition, Offset: r.Offset, Op: string(c.Op), Table: c.Table, Pos: c.Pos,
		CommitMillis: c.CommitMillis, Schema: schemaOf(c.Layout), Unavailable: c.Unavailable, KeyIndex: c.KeyIndex}
	if c.Row != nil {
		out.Row = encodeRow(c.Row)
	}
	for _, k := range c.Key {
		out.Key = append(out.Key, k.(int32))
	}
	return out
}

func decodeRecord(r scriptRecord) (cdcmodel.Record, error) {
	if len(r.Op) != 1 {
		return cdcmodel.Record{}, fmt.Errorf("op %q", r.Op)
	}
	l, err := layoutOf(r.Schema)
	if err != nil {
		return cdcmodel.Record{}, err
	}
	c := codecs.Change{Op: codecs.Op(r.Op[0]), Table: r.Table, Pos: r.Pos, CommitMillis: r.CommitMillis,
		Layout: l, Unavailable: r.Unavailable, KeyIndex: r.KeyIndex}
	if r.Row != nil {
		if l == nil {
			return cdcmodel.Record{}, errors.New("a row without a schema")
		}
		if c.Row, err = decodeRow(l, r.Row); err != nil {
			return cdcmodel.Record{}, err
		}
	}
	if r.Key != nil {
		c.KeyLayout = oracleKey
		for _, k := range r.Key {
			c.Key = append(c.Key, k)
		}
	}
	return cdcmodel.Record{TopicPartition: cdcmodel.TopicPartition{Topic: oracleTopic, Partition: r.Partition}, Offset: r.Offset, Change: c}, nil
}

func encodeRow(row []any) []json.RawMessage {
	out := make([]json.RawMessage, len(row))
	for i, v := range row {
		if n, ok := v.(decimal128.Num); ok {
			v = n.Big().String()
		}
		b, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("oracle value %T: %v", v, err)) // the generator makes only JSON-able values
		}
		out[i] = b
	}
	return out
}

// decodeRow reads a row's values back into the types the generator makes,
// by the schema's column types.
func decodeRow(l *codecs.Layout, enc []json.RawMessage) ([]any, error) {
	if len(enc) != len(l.Columns) {
		return nil, fmt.Errorf("a row of %d values for %d columns", len(enc), len(l.Columns))
	}
	row := make([]any, len(enc))
	for i, raw := range enc {
		col := l.Columns[i]
		if string(raw) == "null" {
			continue
		}
		var err error
		switch col.Type.Kind {
		case codecs.KindShort, codecs.KindInteger, codecs.KindLong:
			var n int64
			if err = json.Unmarshal(raw, &n); err == nil {
				row[i] = map[codecs.Kind]any{codecs.KindShort: int16(n), codecs.KindInteger: int32(n), codecs.KindLong: n}[col.Type.Kind]
			}
		case codecs.KindString:
			var s string
			err = json.Unmarshal(raw, &s)
			row[i] = s
		case codecs.KindBinary:
			var b []byte
			err = json.Unmarshal(raw, &b)
			row[i] = b
		case codecs.KindDecimal:
			var s string
			if err = json.Unmarshal(raw, &s); err == nil {
				b, ok := new(big.Int).SetString(s, 10)
				var n decimal128.Num
				if ok {
					n, ok = decimal128.FromBig(b)
				}
				if !ok {
					err = fmt.Errorf("decimal %q", s)
				}
				row[i] = n
			}
		default:
			err = fmt.Errorf("no oracle value of type %v", col.Type.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", col.Name, err)
		}
	}
	return row, nil
}

// scriptDir is where failing runs save their scripts.
func scriptDir() (string, error) {
	if d := os.Getenv(oracleScriptsEnv); d != "" {
		return d, os.MkdirAll(d, 0o755)
	}
	return os.MkdirTemp("", "cdc2delta-oracle-")
}

// saveScript writes the run's script and logs how to replay it.
func (r *oracleRun) saveScript(dir string) string {
	t := r.t
	s := *r.script
	s.decisions = r.tape.drawn
	if dir == "" {
		var err error
		if dir, err = scriptDir(); err != nil {
			t.Logf("no oracle script saved: %v", err)
			return ""
		}
	}
	path, err := s.save(dir)
	if err != nil {
		t.Logf("no oracle script saved: %v", err)
		return ""
	}
	abs, _ := filepath.Abs(path)
	t.Logf("oracle script: %s (%d batches, %d decisions)\nreplay: %s=%s go test -run 'TestOracleReplay$' ./processor/merge/",
		abs, len(s.batches), len(s.decisions), oracleReplayEnv, strconv.Quote(abs))
	return abs
}

// TestOracleReplay plays back the script CDC2DELTA_ORACLE_REPLAY names,
// which a failing oracle run saved, through the same checks.
func TestOracleReplay(t *testing.T) {
	path := os.Getenv(oracleReplayEnv)
	if path == "" {
		t.Skipf("%s names no script to replay", oracleReplayEnv)
	}
	replayOracle(t, path, nil)
}

// replayOracle plays the script at path; check, when set, is the test-only
// hook oracleRun.check calls on every version.
func replayOracle(t testing.TB, path string, hook checkHook) {
	s, err := loadOracleScript(path)
	require.NoError(t, err)
	t.Logf("replaying %s: seed %d, %+v", path, s.header.Seed, s.header)
	r := newOracleRun(t, s.header, &tape{t: t, replay: s.decisions})
	r.hook = hook
	if r.playToEnd(s) {
		t.Logf("the script ends at its decision %d: the run it was saved from stopped there", len(s.decisions))
		return
	}
	require.Len(t, r.tape.drawn, len(s.decisions), "%v: the run ended before the script's last decision", errScriptMismatch)
}

// playToEnd plays the script and reports whether its decisions ran out
// before the run's end.
func (r *oracleRun) playToEnd(s *oracleScript) (ended bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != errScriptEnd {
				panic(v)
			}
			ended = true
		}
	}()
	r.play(s.batches, s.src)
	return false
}
