package datafile

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// TestReadGoldenTables reads the data files of tables other engines wrote
// (deltalog/testdata/tables) and compares the rows with what those engines read back.
// The log is replayed from its JSON commits here, so tables whose early commits were
// cleaned up are skipped; snapshot replay proper is deltalog's job.
func TestReadGoldenTables(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/tables/*")
	require.NoError(t, err)
	ran := 0
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "_delta_log", "00000000000000000000.json")); err != nil {
			continue
		}
		ran++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var want struct {
				Rows []map[string]any `json:"rows"`
			}
			raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
			require.NoError(t, err)
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&want))

			meta, adds := replayJSON(t, dir)
			schema, err := deltalog.ParseSchema(meta.SchemaString)
			require.NoError(t, err)
			for _, f := range schema.Fields {
				switch f.Type.(type) {
				case deltalog.PrimitiveType, deltalog.DecimalType:
				default:
					t.Skipf("column %s: expected.json forms of nested values are not modelled here", f.Name)
				}
			}
			store, err := localstore.New(localstore.Options{Dir: dir})
			require.NoError(t, err)
			var got []string
			for i := range adds {
				rows, err := Read(t.Context(), store, &adds[i], schema, ReadOptions{Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns})
				require.NoError(t, err, adds[i].Path)
				for _, r := range rows {
					got = append(got, canonicalRow(t, schema, r))
				}
			}
			var exp []string
			for _, r := range want.Rows {
				vals := make([]any, len(schema.Fields))
				for i, f := range schema.Fields {
					vals[i] = r[f.Name]
				}
				exp = append(exp, canonicalExpected(t, schema, vals))
			}
			require.NotEmpty(t, exp)
			slices.Sort(got)
			slices.Sort(exp)
			require.Equal(t, exp, got)
		})
	}
	require.Positive(t, ran, "no golden tables found")
}

// replayJSON applies the JSON commits in order: last metaData wins, adds minus removes.
func replayJSON(t *testing.T, dir string) (*deltalog.Metadata, []deltalog.Add) {
	t.Helper()
	commits, err := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
	require.NoError(t, err)
	slices.Sort(commits)
	var meta *deltalog.Metadata
	live := map[deltalog.FileKey]deltalog.Add{}
	for _, c := range commits {
		f, err := os.Open(c)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			a, ok, err := deltalog.ParseLogLine(sc.Bytes())
			require.NoError(t, err)
			if !ok {
				continue
			}
			switch {
			case a.Metadata != nil:
				meta = a.Metadata
			// A logical file is its path plus its deletion vector: Spark re-adds a path
			// with a new DV next to the remove of the old one, in either order.
			case a.Add != nil:
				live[a.Add.Key()] = *a.Add
			case a.Remove != nil:
				delete(live, a.Remove.Key())
			}
		}
		require.NoError(t, sc.Err())
		f.Close()
	}
	require.NotNil(t, meta)
	var adds []deltalog.Add
	for _, a := range live {
		adds = append(adds, a)
	}
	return meta, adds
}

// canonicalRow renders our Go values in expected.json's canonical forms.
func canonicalRow(t *testing.T, schema *deltalog.StructType, row []any) string {
	parts := make([]string, len(row))
	for i, v := range row {
		if v == nil {
			parts[i] = "null"
			continue
		}
		switch ty := schema.Fields[i].Type.(type) {
		case deltalog.DecimalType:
			parts[i] = v.(decimal128.Num).String(ty.Scale)
		case deltalog.PrimitiveType:
			switch ty {
			case deltalog.TypeFloat:
				parts[i] = strconv.FormatFloat(float64(v.(float32)), 'g', -1, 64)
			case deltalog.TypeDouble:
				parts[i] = strconv.FormatFloat(v.(float64), 'g', -1, 64)
			case deltalog.TypeBinary:
				parts[i] = hex.EncodeToString(v.([]byte))
			case deltalog.TypeDate:
				parts[i] = time.Unix(int64(v.(int32))*86400, 0).UTC().Format(time.DateOnly)
			case deltalog.TypeTimestamp:
				parts[i] = time.UnixMicro(v.(int64)).UTC().Format("2006-01-02T15:04:05.000000Z")
			case deltalog.TypeTimestampNTZ:
				parts[i] = time.UnixMicro(v.(int64)).UTC().Format("2006-01-02T15:04:05.000000")
			default:
				parts[i] = fmt.Sprint(v)
			}
		default:
			t.Fatalf("golden tables hold no %s columns", ty)
		}
	}
	return strings.Join(parts, "|")
}

// canonicalExpected normalizes expected.json values (floats through float64).
func canonicalExpected(t *testing.T, schema *deltalog.StructType, row []any) string {
	parts := make([]string, len(row))
	for i, v := range row {
		if v == nil {
			parts[i] = "null"
			continue
		}
		if n, ok := v.(json.Number); ok {
			if p := schema.Fields[i].Type; p == deltalog.TypeFloat || p == deltalog.TypeDouble {
				f, err := n.Float64()
				require.NoError(t, err)
				parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
				continue
			}
		}
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, "|")
}
