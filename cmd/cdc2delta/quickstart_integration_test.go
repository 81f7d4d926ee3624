//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestQuickstartReadByOtherEngines runs the built binary's quickstart the way a
// user does (from an empty folder, default --dir), reads the tables it prints with
// delta-rs and DuckDB, compares every source column of every row with the sample
// workload's rows, and runs the printed DuckDB and deltalake one-liners.
func TestQuickstartReadByOtherEngines(t *testing.T) {
	const events = 2*quickstartKeys + 3000 // the snapshot of both tables, then changes
	work := t.TempDir()
	cmd := exec.CommandContext(t.Context(), binary, "quickstart",
		"--events", strconv.Itoa(events), "--kafka-port", "0", "--registry-port", "0")
	cmd.Dir = work
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "quickstart: %s%s", stdout.String(), stderr.String())
	out := stdout.String()
	paths := requirePrintedTables(t, out, events, work+"/", func(p string) string { return p })

	t.Run("change log", func(t *testing.T) {
		line := printedCommand(t, out, "_changes")
		f := strings.Fields(line)
		path := f[len(f)-1]
		require.Equal(t, paths["dbo.orders"]+"_changes", path, "the printed change log is the orders table's")
		got := fulltier.Read(t, fulltier.Request{Engine: fulltier.DeltaRS, Path: path})[0]
		require.Empty(t, got.Err, "delta-rs reading %s", path)
		require.NotEmpty(t, got.Rows, "every change event applied to %s", path)
	})
	t.Run("printed deltalake one-liner", func(t *testing.T) {
		code := printedLine(t, out, `  python -c "import pyarrow as pa; from deltalake`)
		res := fulltier.PythonCode(t, code)
		require.Contains(t, res, "order_id", "the printed table is dbo.orders")
		require.Contains(t, res, "[10 rows x 13 columns]") // pandas leaves out the middle columns
	})
	t.Run("printed duckdb one-liner", func(t *testing.T) {
		// As printed: the delta extension comes from the pip wheel, nothing is downloaded.
		res := fulltier.PythonCode(t, printedLine(t, out, `  python -c "import duckdb`))
		require.Contains(t, res, "order_id")
		require.Regexp(t, `10 rows +13 columns`, res)
	})
	t.Run("printed cdc2delta commands", func(t *testing.T) {
		for _, sub := range []string{"show --limit 10 ", "describe "} {
			line := printedCommand(t, out, " "+sub)
			require.True(t, strings.HasPrefix(line, binary+" "), "the printed command runs this binary: %q", line)
			f := strings.Fields(strings.TrimPrefix(line, binary+" "))
			r := exe(t, f...)
			require.Equal(t, exitOK, r.code, r.stderr)
		}
		require.Contains(t, out, "DeltaTable(path).to_pandas() and polars pl.read_delta(path) refuse these tables")
		require.Contains(t, out, "--column-names=portable --deletion-vectors=false")
	})
}

// requirePrintedTables requires the quickstart's output to report every
// event applied and to print one table per sample table under root, and
// each table, opened at readPath(path) by delta-rs and DuckDB, to hold the
// sample workload's rows. It returns the printed paths by table name.
func requirePrintedTables(t *testing.T, out string, events int, root string, readPath func(string) string) map[string]string {
	t.Helper()
	require.Contains(t, out, fmt.Sprintf("applied %d / %d events", events, events))
	paths := printedTables(t, out)
	want := sampleRows(t, events)
	require.Len(t, paths, len(want), out)
	read := map[string]string{} // name by the path the readers open
	var reqs []fulltier.Request
	for name, path := range paths {
		require.Contains(t, want, name)
		require.True(t, strings.HasPrefix(path, root), "table %s at %s, outside %s", name, path, root)
		rp := readPath(path)
		read[rp] = name
		// The filter sends delta-rs through DataFusion, which applies deletion vectors.
		reqs = append(reqs,
			fulltier.Request{Engine: fulltier.DeltaRS, Path: rp, ReadOptions: fulltier.ReadOptions{Filter: "true"}},
			fulltier.Request{Engine: fulltier.DuckDB, Path: rp})
	}
	for _, got := range fulltier.Read(t, reqs...) {
		require.Empty(t, got.Err, "%s reading %s", got.Engine, got.Path)
		requireRows(t, want[read[got.Path]], got)
	}
	return paths
}

// printedCommand returns the printed line (trimmed) that contains part.
func printedCommand(t *testing.T, out, part string) string {
	t.Helper()
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, part) {
			return strings.TrimSpace(line)
		}
	}
	require.Failf(t, "no printed line", "with %q in\n%s", part, out)
	return ""
}

// printedTables returns the "schema.table -> path" lines of the quickstart's
// closing message.
func printedTables(t *testing.T, out string) map[string]string {
	t.Helper()
	_, after, ok := strings.Cut(out, "The Delta tables:\n")
	require.True(t, ok, out)
	block, _, _ := strings.Cut(after, "\n\n")
	paths := map[string]string{}
	for line := range strings.SplitSeq(block, "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 2, "table line %q", line)
		paths[f[0]] = f[1]
	}
	return paths
}

// printedLine returns the quoted code of the printed `python -c "..."` line that
// starts with prefix (from after `python -c "` up to the line's last double quote).
func printedLine(t *testing.T, out, prefix string) string {
	t.Helper()
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, prefix) {
			_, rest, _ := strings.Cut(line, `python -c "`)
			end := strings.LastIndex(rest, `"`)
			require.Positive(t, end, line)
			return rest[:end]
		}
	}
	require.Failf(t, "no printed line", "prefix %q in\n%s", prefix, out)
	return ""
}

// requireRows checks that the engine read exactly the source rows: the same keys,
// and in each row every source column (by its SQL Server name) equal to the
// source value.
func requireRows(t *testing.T, src sourceTable, got fulltier.Table) {
	t.Helper()
	types := map[string]string{}
	for _, f := range got.Schema {
		if s, ok := f.Type.(string); ok {
			types[f.Name] = s
		}
	}
	for _, c := range src.def.Columns {
		require.Contains(t, types, c.Name, "%s: column %q in %s", got.Engine, c.Name, got.Path)
	}
	require.Len(t, got.Rows, len(src.rows), "%s: rows of %s", got.Engine, got.Path)
	byKey := map[string]map[string]any{}
	for _, r := range got.Rows {
		byKey[rowKey(src.def, r)] = r
	}
	require.Len(t, byKey, len(got.Rows), "%s: a key twice in %s", got.Engine, got.Path)
	for _, want := range src.rows {
		wantRow := map[string]any{}
		for _, c := range src.def.Columns {
			v, err := canonicalSource(c, types[c.Name], want[c.Name])
			require.NoError(t, err, "column %s", c.Name)
			wantRow[c.Name] = v
		}
		key := rowKey(src.def, wantRow)
		gotRow, ok := byKey[key]
		require.True(t, ok, "%s: key %s missing from %s", got.Engine, key, got.Path)
		for _, c := range src.def.Columns {
			require.True(t, sameValue(c, wantRow[c.Name], gotRow[c.Name]),
				"%s: %s key %s column %q: want %v, got %v", got.Engine, got.Path, key, c.Name, wantRow[c.Name], gotRow[c.Name])
		}
	}
}

func rowKey(def dbzgen.TableDef, r map[string]any) string {
	parts := make([]string, len(def.Key))
	for i, k := range def.Key {
		parts[i] = fmt.Sprint(r[k])
	}
	return strings.Join(parts, "|")
}

// canonicalSource renders a workload value as deltaread.py renders the Delta
// value: numbers as json.Number, decimals with the column's scale, char(n)
// padded to n, uuids in Debezium's upper case, dates ISO. Timestamps stay
// time.Time for sameValue, which allows for SQL Server's rounding to the
// column's precision.
func canonicalSource(c dbzgen.Column, deltaType string, v any) (any, error) {
	switch x := v.(type) {
	case string:
		// SQL Server pads char(n) and nchar(n) with spaces, and Debezium sends them so.
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(c.Type, "n"), "char(%d)", &n); err == nil && len(x) < n {
			return x + strings.Repeat(" ", n-len(x)), nil
		}
		return x, nil
	case nil, bool, time.Time:
		if tm, ok := v.(time.Time); ok && deltaType == "date" {
			return tm.Format(time.DateOnly), nil
		}
		return v, nil
	case int, int32, int64:
		return json.Number(fmt.Sprint(x)), nil
	case *big.Rat:
		var scale int
		if _, err := fmt.Sscanf(deltaType, "decimal(%d,%d)", new(int), &scale); err != nil {
			return nil, fmt.Errorf("decimal value for %s column %s: %w", deltaType, c.Name, err)
		}
		return x.FloatString(scale), nil
	case uuid.UUID:
		return strings.ToUpper(x.String()), nil
	}
	return nil, fmt.Errorf("column %s (%s): no canonical form for %T", c.Name, c.Type, v)
}

// fractionDigits finds the precision of datetime2(n) and datetimeoffset(n); SQL
// Server's default is 7.
var fractionDigits = regexp.MustCompile(`\((\d)\)$`)

// sameValue compares a canonical source value with what an engine read. Times
// match when they differ by less than the column's rounding (half a unit of its
// last fraction digit) plus Delta's microsecond truncation.
func sameValue(c dbzgen.Column, want, got any) bool {
	tm, ok := want.(time.Time)
	if !ok {
		return fmt.Sprint(want) == fmt.Sprint(got)
	}
	s, ok := got.(string)
	if !ok {
		return false
	}
	digits := 7
	if m := fractionDigits.FindStringSubmatch(c.Type); m != nil {
		digits, _ = strconv.Atoi(m[1]) // one digit, as matched
	}
	slack := time.Microsecond
	if digits < 7 {
		unit := time.Duration(1)
		for range 9 - digits {
			unit *= 10
		}
		slack += unit / 2
	}
	var read time.Time
	var err error
	if strings.HasSuffix(s, "Z") {
		read, err = time.Parse(time.RFC3339Nano, s) // timestamp: an instant in UTC
	} else {
		read, err = time.Parse("2006-01-02T15:04:05.999999999", s) // timestamp_ntz: the wall clock
		wall := tm
		tm = time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), time.UTC)
	}
	if err != nil {
		return false
	}
	d := read.Sub(tm)
	return d > -slack && d < slack
}
