package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// propKeyColumns is the table property in which the processor records the key columns
// (a JSON array), so that optimize can sort by them without importing the processor.
const propKeyColumns = "cdc2delta.keyColumns"

func optimizeCommand() command {
	return command{
		name:    "optimize",
		args:    "TABLE",
		summary: "compact small files and purge deletion vectors (OPTIMIZE, dataChange=false)",
		example: "cdc2delta optimize ./tables/sales/dbo/orders\ncdc2delta optimize --order-by-key --target-size 256MiB s3://lake/sales/dbo/orders",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			target := fs.String("target-size", "128MiB", "target size of the compacted files; smaller files are compacted")
			orderByKey := fs.Bool("order-by-key", false, "sort rows by the table's key columns (property "+propKeyColumns+")")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				size, err := parseSize(*target)
				if err != nil || size <= 0 {
					return usagef("--target-size %q is not a positive size (e.g. 128MiB)", *target)
				}
				t, snap, err := sf.openLatest(ctx, loc)
				if err != nil {
					return err
				}
				var keys []string
				if *orderByKey {
					raw, ok := snap.Metadata().Configuration[propKeyColumns]
					if !ok || json.Unmarshal([]byte(raw), &keys) != nil || len(keys) == 0 {
						return usagef("--order-by-key: the table has no valid %s property", propKeyColumns)
					}
				}
				m, err := optimize(ctx, t, snap, size, keys)
				if err != nil {
					return fmt.Errorf("optimizing %s: %w", loc, err)
				}
				if m == nil {
					fmt.Fprintln(e.stdout, "nothing to optimize")
					return nil
				}
				fmt.Fprintf(e.stdout, "compacted %s files into %s (%s deletion vectors purged)\n",
					m["numRemovedFiles"], m["numAddedFiles"], m["numDeletionVectorsRemoved"])
				return nil
			}
		},
	}
}

// parseSize parses "128MiB"-style sizes (as in the config file).
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n * mult, err
}

// optimize bin-packs, per partition, the files smaller than target and every file with a
// deletion vector into files of about target size, and commits the swap with
// dataChange=false. Bins are bounded by target so memory stays bounded: rows of one bin
// are held at once. It returns nil metrics when there is nothing to do.
func optimize(ctx context.Context, t *deltalog.Table, snap *deltalog.Snapshot, target int64, keys []string) (map[string]string, error) {
	meta := snap.Metadata()
	schema := snap.Schema()
	byPartition := map[string][]deltalog.Add{}
	for _, f := range snap.Files() {
		if f.Size >= target && f.DeletionVector == nil {
			continue
		}
		pv, _ := json.Marshal(f.PartitionValues) // map of strings: cannot fail
		byPartition[string(pv)] = append(byPartition[string(pv)], f)
	}
	keyIdx := make([]int, 0, len(keys))
	for _, k := range keys {
		i := slices.IndexFunc(schema.Fields, func(f deltalog.StructField) bool { return strings.EqualFold(f.Name, k) })
		if i < 0 {
			return nil, fmt.Errorf("key column %q is not in the schema", k)
		}
		keyIdx = append(keyIdx, i)
	}
	w, err := datafile.NewWriter(datafile.Options{
		Schema: schema, PartitionColumns: meta.PartitionColumns, Properties: meta.Configuration,
		TargetFileSize: target, NoDataChange: true,
	})
	if err != nil {
		return nil, err
	}
	var actions []deltalog.Action
	var removed []string
	var added []int64
	var removedBytes, addedBytes, dvsRemoved int64
	for _, pk := range slices.Sorted(maps.Keys(byPartition)) {
		for _, bin := range bins(byPartition[pk], target) {
			var rows [][]any
			for _, f := range bin {
				r, err := datafile.Read(ctx, t.Store(), &f, schema, datafile.ReadOptions{
					Properties: meta.Configuration, PartitionColumns: meta.PartitionColumns,
				})
				if err != nil {
					return nil, fmt.Errorf("reading %s: %w", f.Path, err)
				}
				rows = append(rows, r...)
			}
			if len(keyIdx) > 0 {
				slices.SortStableFunc(rows, func(a, b []any) int {
					for _, i := range keyIdx {
						if c := compareValues(a[i], b[i]); c != 0 {
							return c
						}
					}
					return 0
				})
			}
			var adds []deltalog.Add
			if len(rows) > 0 {
				if adds, err = w.Write(ctx, t.Store(), rows); err != nil {
					return nil, err
				}
			}
			for _, f := range bin {
				size := f.Size
				actions = append(actions, deltalog.Action{Remove: &deltalog.Remove{
					Path: f.Path, DataChange: false, ExtendedFileMetadata: true, PartitionValues: f.PartitionValues,
					Size: &size, Tags: f.Tags, DeletionVector: f.DeletionVector,
					BaseRowID: f.BaseRowID, DefaultRowCommitVersion: f.DefaultRowCommitVersion,
				}})
				removed = append(removed, f.Path)
				removedBytes += f.Size
				if f.DeletionVector != nil {
					dvsRemoved++
				}
			}
			for _, a := range adds {
				actions = append(actions, deltalog.Action{Add: &a})
				added = append(added, a.Size)
				addedBytes += a.Size
			}
		}
	}
	if len(removed) == 0 {
		return nil, nil
	}
	slices.Sort(added)
	pct := func(p int) string {
		if len(added) == 0 {
			return "0"
		}
		return strconv.FormatInt(added[(len(added)-1)*p/100], 10)
	}
	zorder, _ := json.Marshal(keys) // []string: cannot fail
	if keys == nil {
		zorder = []byte("[]")
	}
	metrics := map[string]string{
		"numAddedFiles": strconv.Itoa(len(added)), "numRemovedFiles": strconv.Itoa(len(removed)),
		"numAddedBytes": strconv.FormatInt(addedBytes, 10), "numRemovedBytes": strconv.FormatInt(removedBytes, 10),
		"minFileSize": pct(0), "p25FileSize": pct(25), "p50FileSize": pct(50), "p75FileSize": pct(75), "maxFileSize": pct(100),
		"numDeletionVectorsRemoved": strconv.FormatInt(dvsRemoved, 10),
	}
	op := deltalog.Operation{Name: deltalog.OpOptimize, Metrics: metrics,
		Parameters: map[string]string{"predicate": "[]", "zOrderBy": string(zorder)}}
	if _, err := t.Commit(ctx, snap, actions, op, deltalog.ReadFiles(removed...)); err != nil {
		return nil, err
	}
	return metrics, nil
}

// bins groups files, smallest first, into bins of at most target bytes. A bin of one
// file is dropped unless the file has a deletion vector to purge: rewriting it alone
// would compact nothing.
func bins(files []deltalog.Add, target int64) [][]deltalog.Add {
	slices.SortFunc(files, func(a, b deltalog.Add) int {
		return cmp.Or(cmp.Compare(a.Size, b.Size), strings.Compare(a.Path, b.Path))
	})
	var out [][]deltalog.Add
	var cur []deltalog.Add
	var size int64
	flush := func() {
		if len(cur) > 1 || (len(cur) == 1 && cur[0].DeletionVector != nil) {
			out = append(out, cur)
		}
		cur, size = nil, 0
	}
	for _, f := range files {
		if len(cur) > 0 && size+f.Size > target {
			flush()
		}
		cur = append(cur, f)
		size += f.Size
	}
	flush()
	return out
}

// compareValues orders datafile values of one column; nulls first. Values of one column
// share a Go type; a mismatch (which Read never produces) compares equal rather than
// panicking.
func compareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch x := a.(type) {
	case int8:
		return cmpAs(x, b)
	case int16:
		return cmpAs(x, b)
	case int32:
		return cmpAs(x, b)
	case int64:
		return cmpAs(x, b)
	case float32:
		return cmpAs(x, b)
	case float64:
		return cmpAs(x, b)
	case string:
		return cmpAs(x, b)
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y)
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp.Compare(boolInt(x), boolInt(y))
		}
	case decimal128.Num:
		if y, ok := b.(decimal128.Num); ok {
			return x.Cmp(y)
		}
	}
	return 0
}

func cmpAs[T cmp.Ordered](x T, b any) int {
	if y, ok := b.(T); ok {
		return cmp.Compare(x, y)
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
