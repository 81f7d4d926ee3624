//go:build integration

package tableops_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

// stmt is one UPDATE (set non-empty) or DELETE.
type stmt struct {
	set   []string
	where string
}

// sparkSQL renders the statement for Spark SQL.
func (s stmt) sparkSQL() string {
	if len(s.set) > 0 {
		return "UPDATE {table} SET " + strings.Join(s.set, ", ") + " WHERE " + s.where
	}
	return "DELETE FROM {table} WHERE " + s.where
}

type oracleCase struct {
	name  string
	table dmlTable
	stmts []stmt
	// duckdb reads the table (not a column-mapped partitioned one: duckdb-delta#343).
	duckdb bool
}

func d102(s string) decimal128.Num {
	n, err := decimal128.Parse(s, 10, 2)
	if err != nil {
		panic(err)
	}
	return n
}

func d3810(s string) decimal128.Num {
	n, err := decimal128.Parse(s, 38, 10)
	if err != nil {
		panic(err)
	}
	return n
}

// typesTable has a column of every primitive type and a row of NULLs.
func typesTable() dmlTable {
	f := func(name string, t deltalog.Type) deltalog.StructField {
		return deltalog.StructField{Name: name, Type: t, Nullable: true}
	}
	schema := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "id", Type: deltalog.TypeLong},
		f("b", deltalog.TypeBoolean), f("y", deltalog.TypeByte), f("s", deltalog.TypeShort), f("i", deltalog.TypeInteger),
		f("l", deltalog.TypeLong), f("f", deltalog.TypeFloat), f("d", deltalog.TypeDouble),
		f("dec", deltalog.DecimalType{Precision: 10, Scale: 2}), f("big", deltalog.DecimalType{Precision: 38, Scale: 10}),
		f("str", deltalog.TypeString), f("bin", deltalog.TypeBinary), f("dt", deltalog.TypeDate),
		f("ts", deltalog.TypeTimestamp), f("ntz", deltalog.TypeTimestampNTZ),
	}}
	day := func(s string) int32 {
		t, _ := time.Parse("2006-01-02", s)
		return int32(t.Unix() / 86400)
	}
	us := func(s string) int64 {
		t, _ := time.Parse("2006-01-02 15:04:05.999999", s)
		return t.UnixMicro()
	}
	r := func(id int64, b bool, y int8, s int16, i int32, l int64, fl float32, d float64, dec, big, str string, bin []byte, dt, ts, ntz string) []any {
		return []any{id, b, y, s, i, l, fl, d, d102(dec), d3810(big), str, bin, day(dt), us(ts), us(ntz)}
	}
	nulls := []any{int64(9), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
	return dmlTable{schema: schema, dv: true, cdf: true, files: [][][]any{
		{
			r(1, true, 1, 10, 100, 1000, 1.5, 2.25, "12.34", "1.0000000001", "alpha", []byte{0}, "2024-01-01", "2024-01-01 00:00:00", "2024-01-01 00:00:00"),
			r(2, false, 2, 20, -5, -1, -0.25, 1e10, "99.99", "123456789.5", "beta", []byte{1, 2}, "2024-01-10", "2024-05-31 23:59:59.999999", "2024-02-01 10:00:00"),
			r(3, true, 3, -30, 7, 7, 0, -3.5, "0.01", "-42", "", []byte{}, "2024-02-29", "2024-06-01 00:00:00", "2024-03-01 00:00:00.5"),
		},
		{
			r(4, true, 127, 32000, 2147483000, 9000000000, 3.25, 0.1, "-5.00", "0.3333333333", "Alpha", []byte{255}, "2023-12-31", "2024-07-04 12:00:00", "2024-07-04 12:00:00"),
			r(5, false, -128, -32768, 0, 0, 100, 100, "1.00", "1", "a%b", []byte{9}, "2024-03-15", "2024-03-15 08:30:00", "2024-03-15 08:30:00"),
		},
		{
			r(6, true, 5, 5, 5, 5, 5, 5, "5.55", "5.5555555555", "a_c", []byte{5}, "2024-01-05", "2024-01-05 05:05:05", "2024-01-05 05:05:05"),
			nulls,
		},
	}}
}

func oracleCases() []oracleCase {
	seed := []stmt{
		{set: []string{"points = 11 - position"}, where: "position <= 10"},
		{where: "position > 10"},
		{where: "points = 0"},
	}
	grid := func(dv, cdf bool, parts []string) dmlTable {
		schema := &deltalog.StructType{Fields: []deltalog.StructField{
			{Name: "id", Type: deltalog.TypeLong}, {Name: "part", Type: deltalog.TypeString, Nullable: true},
			{Name: "v", Type: deltalog.TypeInteger, Nullable: true},
		}}
		var files [][][]any
		for f := range 4 {
			var rows [][]any
			for r := range 5 {
				id := int64(f*5 + r + 1)
				rows = append(rows, []any{id, []string{"even", "odd"}[f%2], int32(id * 10)})
			}
			files = append(files, rows)
		}
		return dmlTable{schema: schema, dv: dv, cdf: cdf, partitions: parts, files: files}
	}
	gridStmts := []stmt{
		{where: "id > 1000"},                             // nothing
		{set: []string{"v = v + 1"}, where: "true"},      // everything
		{where: "id % 5 = 0"},                            // one row per file
		{set: []string{"v = NULL"}, where: "id % 5 = 1"}, // one row per file, NULL set
		{where: "v IS NULL AND part = 'odd'"},
	}
	mapped := dmlTable{
		schema: &deltalog.StructType{Fields: []deltalog.StructField{
			{Name: "id", Type: deltalog.TypeLong}, {Name: "region", Type: deltalog.TypeString, Nullable: true},
			{Name: "Unit Price", Type: deltalog.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
			{Name: "qty (kg)", Type: deltalog.TypeInteger, Nullable: true},
		}},
		partitions: []string{"region"}, dv: true, mapping: true, cdf: true,
		files: [][][]any{
			{{int64(1), "eu", d102("10.00"), int32(1)}, {int64(2), "eu", d102("2.50"), int32(7)}},
			{{int64(3), "us", d102("99.99"), int32(9)}, {int64(4), "us", nil, int32(3)}},
			{{int64(5), nil, d102("1.01"), nil}},
		},
	}
	return []oracleCase{
		{name: "seed, deletion vectors, cdf", table: results(true, true), stmts: seed, duckdb: true},
		{name: "seed, copy-on-write", table: results(false, false), stmts: seed, duckdb: true},
		{name: "every type, nulls", table: typesTable(), duckdb: true, stmts: []stmt{
			{set: []string{"y = y + 1", "s = s * 2", "i = i - 3", "l = l + 1000000000000"}, where: "b AND i > 0 AND y < 100"},
			{set: []string{"dec = dec * 1.1", "big = big / 3", "f = f + 0.5", "d = d * 2"}, where: "dec BETWEEN 1 AND 100 OR big IS NULL"},
			{set: []string{"str = concat(str, '!')", "bin = X'FF'", "dt = '2024-02-29'", "ts = TIMESTAMP '2024-03-01 12:34:56.789'", "ntz = '2024-03-01 00:00:00'"},
				where: "str LIKE 'a%' OR dt < DATE '2024-01-06'"},
			{set: []string{"str = COALESCE(str, 'none')", "i = CASE WHEN i IS NULL THEN -1 WHEN i > 100 THEN NULL ELSE i END", "b = NOT b"}, where: "id > 0"},
			{where: "ts >= '2024-06-01' OR ntz = '2024-03-15 08:30:00' OR bin = X'09'"},
			{where: "y IN (2, 4, NULL) OR str LIKE 'a\\\\_c!' OR big < 0"},
		}},
		{name: "column mapping, partitioned, deletion vectors, cdf", table: mapped, stmts: []stmt{
			{set: []string{"`Unit Price` = `Unit Price` * 2"}, where: "region = 'eu'"},
			{where: "region = 'us' AND `qty (kg)` > 5"},
			{set: []string{"region = 'apac'", "`qty (kg)` = COALESCE(`qty (kg)`, 0)"}, where: "`qty (kg)` < 4 OR region IS NULL"},
		}},
		{name: "nothing, everything, one row per file, copy-on-write", table: grid(false, false, nil), stmts: gridStmts, duckdb: true},
		{name: "nothing, everything, one row per file, partitioned, deletion vectors, cdf", table: grid(true, true, []string{"part"}), stmts: gridStmts, duckdb: true},
		semanticsCase(),
	}
}

// TestDMLSparkOracle runs each case's UPDATE and DELETE statements with tableops on a
// table and with Spark SQL on a copy of it, then checks that Spark, delta-rs and DuckDB
// read our table as Spark reads its own, that our reader reads Spark's table as ours,
// that the change data feeds agree, and that DESCRIBE HISTORY shows our commits as it
// shows Spark's. One deltaread.py process (one Spark session) serves every case.
func TestDMLSparkOracle(t *testing.T) {
	type prepared struct {
		c          oracleCase
		ours, copy string
		oursTable  *deltalog.Table
		version    int64
	}
	var cases []prepared
	root := t.TempDir()
	for i, c := range oracleCases() {
		dir := filepath.Join(root, fmt.Sprintf("case%d", i))
		st, err := localstore.New(localstore.Options{Dir: dir})
		require.NoError(t, err)
		tbl, _ := c.table.create(t, st)
		cp := dir + "-spark"
		require.NoError(t, os.CopyFS(cp, os.DirFS(dir)))
		for _, s := range c.stmts {
			require.NoError(t, runStmt(t, tbl, s), "%s: %s", c.name, s.sparkSQL())
		}
		snap, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		cases = append(cases, prepared{c: c, ours: dir, copy: cp, oursTable: tbl, version: snap.Version()})
	}

	var reqs []fulltier.Request
	type slot struct{ spark, sparkOurs, deltars, duckdb, cdfOurs, cdfSpark, histOurs, histSpark int }
	slots := make([]slot, len(cases))
	add := func(r fulltier.Request) int {
		reqs = append(reqs, r)
		return len(reqs) - 1
	}
	for i, p := range cases {
		var sqls []string
		for _, s := range p.c.stmts {
			sqls = append(sqls, s.sparkSQL())
		}
		sqls = append(sqls, "SELECT 1")
		add(fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: p.copy, Statements: sqls})
		s := slot{duckdb: -1, cdfOurs: -1, cdfSpark: -1}
		s.spark = add(fulltier.Request{Engine: fulltier.Spark, Path: p.copy, ReadOptions: fulltier.ReadOptions{RowsOnly: true}})
		s.sparkOurs = add(fulltier.Request{Engine: fulltier.Spark, Path: p.ours, ReadOptions: fulltier.ReadOptions{RowsOnly: true}})
		s.deltars = add(fulltier.Request{Engine: fulltier.DeltaRS, API: "querybuilder", Path: p.ours})
		if p.c.duckdb {
			s.duckdb = add(fulltier.Request{Engine: fulltier.DuckDB, Path: p.ours})
		}
		if p.c.table.cdf {
			s.cdfOurs = add(fulltier.Request{Engine: fulltier.Spark, API: "read_change_feed", Path: p.ours})
			s.cdfSpark = add(fulltier.Request{Engine: fulltier.Spark, API: "read_change_feed", Path: p.copy})
		}
		hist := []string{"DESCRIBE HISTORY {table}"}
		s.histOurs = add(fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: p.ours, Statements: hist})
		s.histSpark = add(fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: p.copy, Statements: hist})
		slots[i] = s
	}
	// Statements Spark refuses: we refuse them too and leave the table alone.
	errDir := filepath.Join(root, "refused")
	errStore, err := localstore.New(localstore.Options{Dir: errDir})
	require.NoError(t, err)
	errTbl, _ := semanticsCase().table.create(t, errStore)
	errCopy := errDir + "-spark"
	require.NoError(t, os.CopyFS(errCopy, os.DirFS(errDir)))
	refused := semanticsErrors()
	refusedSlots := make([]int, len(refused))
	for i, s := range refused {
		require.Error(t, runStmt(t, errTbl, s), s.sparkSQL())
		refusedSlots[i] = add(fulltier.Request{Engine: fulltier.Spark, API: "sql", Path: errCopy, Statements: []string{s.sparkSQL(), "SELECT 1"}})
	}

	start := time.Now()
	res := fulltier.Read(t, reqs...)
	t.Logf("deltaread: %d requests in %s", len(reqs), time.Since(start).Round(time.Millisecond))

	t.Run("statements Spark refuses", func(t *testing.T) {
		for i, s := range refused {
			require.NotEmpty(t, res[refusedSlots[i]].Err, "Spark runs %s", s.sparkSQL())
		}
		for _, dir := range []string{errDir, errCopy} {
			st, err := localstore.New(localstore.Options{Dir: dir})
			require.NoError(t, err)
			tbl, err := deltalog.Open(t.Context(), st)
			require.NoError(t, err)
			snap, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			require.Equal(t, int64(0), snap.Version(), dir)
		}
	})
	for i, p := range cases {
		s := slots[i]
		t.Run(p.c.name, func(t *testing.T) {
			for _, k := range []int{s.spark - 1, s.spark, s.sparkOurs, s.deltars, s.duckdb, s.cdfOurs, s.cdfSpark, s.histOurs, s.histSpark} {
				if k >= 0 {
					require.Empty(t, res[k].Err, "%s %s %s", res[k].Engine, res[k].API, res[k].Path)
				}
			}
			want := res[s.spark].Rows
			require.Equal(t, want, res[s.sparkOurs].Rows, "Spark reads our table as it reads its own")
			require.Equal(t, want, res[s.deltars].Rows, "delta-rs reads our table as Spark reads its own")
			if s.duckdb >= 0 {
				require.Equal(t, want, res[s.duckdb].Rows, "DuckDB reads our table as Spark reads its own")
			}
			if s.cdfOurs >= 0 {
				require.Equal(t, res[s.cdfSpark].Rows, res[s.cdfOurs].Rows, "the change data feeds agree")
			}
			// Our reader reads Spark's table (its deletion vectors and rewrites) as ours.
			st, err := localstore.New(localstore.Options{Dir: p.copy})
			require.NoError(t, err)
			sparkTbl, err := deltalog.Open(t.Context(), st)
			require.NoError(t, err)
			sparkSnap, err := sparkTbl.Snapshot(t.Context())
			require.NoError(t, err)
			oursSnap, err := p.oursTable.Snapshot(t.Context())
			require.NoError(t, err)
			require.Equal(t, tableRows(t, sparkTbl, sparkSnap), tableRows(t, p.oursTable, oursSnap))
			require.Equal(t, sparkSnap.Version(), oursSnap.Version(), "one commit per statement that changed rows, as Spark")
			compareHistory(t, res[s.histSpark].Rows, res[s.histOurs].Rows)
		})
	}
}

// runStmt runs one UPDATE or DELETE with tableops on the table's latest snapshot.
func runStmt(t *testing.T, tbl *deltalog.Table, s stmt) error {
	t.Helper()
	snap, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	if len(s.set) > 0 {
		_, err = tableops.Update(t.Context(), tbl, snap, s.set, s.where, tableops.DMLOptions{})
	} else {
		_, err = tableops.Delete(t.Context(), tbl, snap, s.where, tableops.DMLOptions{})
	}
	return err
}

// compareHistory checks that DESCRIBE HISTORY shows our commits with Spark's operation,
// metric names and row counts.
func compareHistory(t *testing.T, spark, ours []map[string]any) {
	t.Helper()
	byVersion := func(rows []map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, r := range rows {
			out[fmt.Sprint(r["version"])] = r
		}
		return out
	}
	kv := func(v any) map[string]string {
		out := map[string]string{}
		items, _ := v.([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			out[fmt.Sprint(m["key"])] = fmt.Sprint(m["value"])
		}
		return out
	}
	s, o := byVersion(spark), byVersion(ours)
	require.Equal(t, len(s), len(o), "history lengths")
	for v, sr := range s {
		or := o[v]
		require.NotNil(t, or, "version %s", v)
		require.Equal(t, sr["operation"], or["operation"], "version %s", v)
		if sr["operation"] != "UPDATE" && sr["operation"] != "DELETE" {
			continue
		}
		sm, om := kv(sr["operationMetrics"]), kv(or["operationMetrics"])
		var missing []string
		for k := range sm {
			if _, ok := om[k]; !ok {
				missing = append(missing, k)
			}
		}
		slices.Sort(missing)
		require.Empty(t, missing, "version %s: metrics Spark records and we do not (Spark: %v, ours: %v)", v, sm, om)
		for _, k := range []string{"numUpdatedRows", "numDeletedRows"} {
			require.Equal(t, sm[k], om[k], "version %s %s", v, k)
		}
		sp, op := kv(sr["operationParameters"]), kv(or["operationParameters"])
		js, _ := json.Marshal(sp)
		jo, _ := json.Marshal(op)
		t.Logf("version %s %s: Spark parameters %s, ours %s", v, sr["operation"], js, jo)
		require.Equal(t, slices.Sorted(mapKeys(sp)), slices.Sorted(mapKeys(op)), "version %s parameters", v)
		for name, params := range map[string]map[string]string{"Spark": sp, "ours": op} {
			var conjuncts []string
			require.NoError(t, json.Unmarshal([]byte(params["predicate"]), &conjuncts), "version %s: %s predicate is a JSON list", v, name)
			require.NotEmpty(t, conjuncts, "version %s: %s predicate", v, name)
		}
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
