package codecs_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// realRecord is one Kafka record of testdata/debezium/real: what a real
// Kafka Connect worker with Debezium's connector and the JsonConverter
// wrote (capture.sh there says how).
type realRecord struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Key       string  `json:"key"`
	Value     *string `json:"value"`
}

func readReal(t *testing.T, name string) []realRecord {
	t.Helper()
	f, err := os.Open("testdata/debezium/real/" + name)
	require.NoError(t, err)
	defer f.Close()
	var out []realRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r realRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		out = append(out, r)
	}
	require.NoError(t, sc.Err())
	return out
}

// decodeReal decodes every record of a golden file, by topic, in offset order.
func decodeReal(t *testing.T, name string) map[string][]codecs.Change {
	t.Helper()
	d := newJSONDecoder(t, codecs.Options{})
	out := map[string][]codecs.Change{}
	for _, r := range readReal(t, name) {
		var value []byte
		if r.Value != nil {
			value = []byte(*r.Value)
		}
		ch, err := d.Decode(t.Context(), []byte(r.Key), value)
		require.NoError(t, err, "%s@%d", r.Topic, r.Offset)
		out[r.Topic] = append(out[r.Topic], ch)
	}
	return out
}

func TestRealFloatTypeNames(t *testing.T) {
	for _, f := range []string{"postgres.jsonl", "mariadb.jsonl"} {
		raw, err := os.ReadFile("testdata/debezium/real/" + f)
		require.NoError(t, err)
		require.Contains(t, string(raw), `\"type\":\"double\"`, f)
		require.Contains(t, string(raw), `\"type\":\"float\"`, f)
		require.NotContains(t, string(raw), `float64`, f)
	}
}

// realTopic is what one topic of a golden file must decode to.
type realTopic struct {
	ops string // one letter per record, '-' for a tombstone
	// unavailable maps a record's index to the columns it did not carry.
	unavailable map[int][]string
	// types are the row's column types, by name (nil: not checked).
	types map[string]string
}

func checkReal(t *testing.T, file string, want map[string]realTopic) {
	t.Helper()
	got := decodeReal(t, file)
	require.Len(t, got, len(want))
	for topic, w := range want {
		t.Run(topic, func(t *testing.T) {
			chs := got[topic]
			ops := ""
			for _, ch := range chs {
				ops += string(rune(ch.Op))
			}
			require.Equal(t, w.ops, ops)
			for _, ch := range chs {
				require.Equal(t, ch.Op == codecs.OpRead, ch.Snapshot != "", "snapshot marker on %c", ch.Op)
			}
			var last codecs.Position
			for i, ch := range chs {
				if ch.Op == codecs.OpTombstone {
					continue
				}
				// The topic's order is the source's: positions never go
				// back (a primary-key change's delete and create share one).
				require.GreaterOrEqual(t, ch.Pos.Compare(last), 0, "record %d: %s after %s", i, ch.Pos, last)
				if i == 0 || ch.Op != codecs.OpCreate || chs[i-1].Op != codecs.OpTombstone {
					require.Equal(t, 1, ch.Pos.Compare(last), "record %d: %s after %s", i, ch.Pos, last)
				}
				last = ch.Pos
				var unavailable []string
				for _, u := range ch.Unavailable {
					unavailable = append(unavailable, ch.Layout.Columns[u].Name)
				}
				require.Equal(t, w.unavailable[i], unavailable, "record %d", i)
			}
			if w.types != nil {
				types := map[string]string{}
				for _, c := range chs[0].Layout.Columns {
					types[c.Name] = c.Type.String()
				}
				require.Equal(t, w.types, types)
			}
		})
	}
}

func TestRealPostgres(t *testing.T) {
	checkReal(t, "postgres.jsonl", map[string]realTopic{
		"golden.public.typed": {ops: "rcuud-cd-", unavailable: map[int][]string{2: {"big"}},
			types: map[string]string{
				"id": "integer", "n": "decimal(12,3)", "i2": "short", "i8": "long", "f8": "double", "b": "boolean",
				"d": "date", "t": "time", "tz": "string", "ts": "timestamp_ntz", "tstz": "timestamp", "iv": "long",
				"j": "string", "jb": "string", "u": "string", "e": "string", "by": "binary", "bt": "binary",
				"vb": "binary", "money": "decimal(38,2)", "c": "string", "vc": "string", "tx": "string",
				"inet": "string", "big": "string",
			}},
		"golden.public.other":  {ops: "ccct"},
		"golden.public.floats": {ops: "r", types: map[string]string{"id": "integer", "f4": "float"}},
	})
}

func TestRealMariaDB(t *testing.T) {
	checkReal(t, "mariadb.jsonl", map[string]realTopic{
		"goldenmaria.golden.typed": {ops: "rcuud-cd-", types: map[string]string{
			"id": "integer", "n": "decimal(12,3)", "ti": "short", "si": "short", "bi": "long", "d": "double",
			"b": "boolean", "bits": "binary", "dt": "date", "tm": "long", "dt6": "timestamp_ntz", "ts": "timestamp",
			"y": "integer", "j": "string", "e": "string", "s": "string", "ch": "string", "vc": "string",
			"tx": "string", "bl": "binary", "vb": "binary",
		}},
		"goldenmaria.golden.other":  {ops: "ccccct"},
		"goldenmaria.golden.floats": {ops: "r", types: map[string]string{"id": "integer", "f": "float"}},
	})
}
