//go:build integration

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// compareColumns are a table's columns whose values compare without
// conversion between the workload model, deltalog and delta-rs: keys,
// integers, strings and bits.
func compareColumns(def dbzgen.TableDef) []string {
	var out []string
	for _, c := range def.Columns {
		typ, _, _ := strings.Cut(c.Type, "(")
		switch typ {
		case "int", "bigint", "nvarchar", "varchar", "bit":
			out = append(out, c.Name)
		}
	}
	return out
}

// renderRow renders the values of a row's compared columns as one line;
// get returns a column's value.
func renderRow(cols []string, get func(string) any) string {
	var b strings.Builder
	for _, c := range cols {
		v := get(c)
		if v == nil {
			b.WriteString("<nil>|")
			continue
		}
		fmt.Fprintf(&b, "%v|", v)
	}
	return b.String()
}

// modelRows renders the source's current rows, sorted.
func modelRows(rows []dbzgen.Row, cols []string) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, renderRow(cols, func(c string) any { return r[c] }))
	}
	slices.Sort(out)
	return out
}

// crashTable is one Delta table written by the binary, read back with
// deltalog from its directory, or from st when set (a table on an object
// store, whose change log is in changes).
type crashTable struct {
	t       *testing.T
	dir     string
	st      deltalog.Store
	changes deltalog.Store
}

// changeLog is the store of the table's change log (dir + "_changes").
func (c crashTable) changeLog() deltalog.Store {
	if c.changes != nil {
		return c.changes
	}
	st, err := localstore.New(localstore.Options{Dir: c.dir + "_changes", NoSync: true})
	require.NoError(c.t, err)
	return st
}

func (c crashTable) store() deltalog.Store {
	if c.st != nil {
		return c.st
	}
	st, err := localstore.New(localstore.Options{Dir: c.dir, NoSync: true})
	require.NoError(c.t, err)
	return st
}

// snapshot returns the latest snapshot, or nil while the table does not
// exist yet.
func (c crashTable) snapshot() *deltalog.Snapshot {
	c.t.Helper()
	tbl, err := deltalog.Open(c.t.Context(), c.store())
	require.NoError(c.t, err)
	snap, err := tbl.Snapshot(c.t.Context())
	if err != nil {
		return nil
	}
	return snap
}

// rows renders the live rows' compared columns, sorted, and the number of
// rows per key (key columns rendered the same way).
func (c crashTable) rows(cols, key []string) (rows []string, perKey map[string]int) {
	c.t.Helper()
	ctx := c.t.Context()
	snap := c.snapshot()
	require.NotNil(c.t, snap, "table %s", c.dir)
	idx := map[string]int{}
	for i, f := range snap.Schema().Fields {
		idx[f.Name] = i
	}
	perKey = map[string]int{}
	store := c.store()
	for _, add := range snap.Files() {
		rs, err := datafile.Read(ctx, store, &add, snap.Schema(), datafile.ReadOptions{Properties: snap.Metadata().Configuration})
		require.NoError(c.t, err)
		for _, r := range rs {
			get := func(col string) any {
				i, ok := idx[col]
				require.True(c.t, ok, "column %s in %s", col, c.dir)
				return r[i]
			}
			rows = append(rows, renderRow(cols, get))
			perKey[renderRow(key, get)]++
		}
	}
	slices.Sort(rows)
	return rows, perKey
}

// commitVersions lists the versions of the log's commit files.
func (c crashTable) commitVersions() []int64 {
	c.t.Helper()
	var out []int64
	for info, err := range c.store().List(c.t.Context(), "_delta_log/", "") {
		require.NoError(c.t, err)
		name := strings.TrimPrefix(info.Path, "_delta_log/")
		num, ok := strings.CutSuffix(name, ".json")
		if !ok || strings.Contains(num, ".") || len(num) != 20 {
			continue
		}
		v, err := strconv.ParseInt(num, 10, 64)
		require.NoError(c.t, err, name)
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// commit reads the actions of one commit file.
func (c crashTable) commit(v int64) []deltalog.Action {
	c.t.Helper()
	rc, err := c.store().Get(c.t.Context(), fmt.Sprintf("_delta_log/%020d.json", v))
	require.NoError(c.t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(c.t, err)
	var out []deltalog.Action
	for line := range strings.Lines(string(data)) {
		a, ok, err := deltalog.ParseLogLine([]byte(line))
		require.NoError(c.t, err, "version %d", v)
		if ok {
			out = append(out, a)
		}
	}
	return out
}

// logReport is what a walk over every commit of the log finds.
type logReport struct {
	// versions is the number of commit files.
	versions int
	// referenced holds every data file path an add or remove names.
	referenced map[string]bool
	// txnRegressions lists commits whose txn for an app id is not above
	// the previous one: a batch applied twice.
	txnRegressions []string
}

// walkLog reads every commit in order.
func (c crashTable) walkLog() logReport {
	c.t.Helper()
	rep := logReport{referenced: map[string]bool{}}
	last := map[string]int64{}
	versions := c.commitVersions()
	rep.versions = len(versions)
	for _, v := range versions {
		for _, a := range c.commit(v) {
			switch {
			case a.Add != nil:
				rep.referenced[a.Add.Path] = true
			case a.Remove != nil:
				rep.referenced[a.Remove.Path] = true
			case a.Txn != nil:
				if prev, ok := last[a.Txn.AppID]; ok && a.Txn.Version <= prev {
					rep.txnRegressions = append(rep.txnRegressions,
						fmt.Sprintf("v%d %s: txn %d after %d", v, a.Txn.AppID, a.Txn.Version, prev))
				}
				last[a.Txn.AppID] = a.Txn.Version
			}
		}
	}
	return rep
}

// orphans counts the data files on disk that no commit references: the
// files of a commit the process was killed before (or while) writing its
// log entry.
func (c crashTable) orphans() int {
	c.t.Helper()
	if len(c.commitVersions()) == 0 {
		return c.dataFiles(nil)
	}
	return c.dataFiles(c.walkLog().referenced)
}

// dataFiles counts the Parquet files outside _delta_log not in referenced.
func (c crashTable) dataFiles(referenced map[string]bool) int {
	c.t.Helper()
	n := 0
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == c.dir && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return err
		}
		rel, err := filepath.Rel(c.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "_delta_log" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".parquet") && !referenced[rel] {
			n++
		}
		return nil
	})
	require.NoError(c.t, err)
	return n
}
