package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func reconcileCommand() command {
	return command{
		name:    "reconcile",
		args:    "TABLE",
		summary: "compare a table with an expected CSV or Parquet export by key: missing, extra and different rows",
		example: "cdc2delta reconcile ./tables/sales/dbo/orders --against orders.csv --key order_id\n" +
			"cdc2delta reconcile s3://lake/sales/dbo/orders --against export.parquet --samples 20 --memory-mib 512\n" +
			"# exit code 0: equal, 1: differences, 2: usage or I/O error",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			against := fs.String("against", "", "the expected rows: a `file` ending .csv (with a header) or .parquet (required)")
			key := fs.String("key", "", "comma-separated key `columns` (default: the key columns cdc2delta records on the table)")
			samples := fs.Int("samples", 10, "list up to `n` keys of each kind of difference")
			memMiB := fs.Int("memory-mib", 256, "hold at most about `MiB` of rows; both sides are hash-partitioned by key into spill files to fit")
			tempDir := fs.String("temp-dir", "", "`directory` for the spill files (default: the system's temporary directory)")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				if *against == "" {
					return usagef("--against FILE is required")
				}
				if *samples < 0 || *memMiB <= 0 {
					return usagef("--samples must not be negative, --memory-mib must be positive")
				}
				t, snap, err := sf.openLatestReader(ctx, loc)
				if err != nil {
					return &usageError{msg: err.Error()} // exit 2: the comparison never ran
				}
				if snap.Metadata().Configuration[cdctable.PropShape] == cdctable.ShapeHistory {
					return historyRefusal(loc, "reconcile compares a source export with")
				}
				opts := tableops.ReconcileOptions{Against: *against, Samples: *samples, MemoryBytes: int64(*memMiB) << 20, TempDir: *tempDir}
				if *key != "" {
					opts.Key = strings.Split(*key, ",")
				} else if opts.Key, err = cdctable.KeyColumns(snap.Metadata()); err != nil {
					return usagef("--key is required: %s records no key columns", loc)
				}
				// Metadata columns are never compared; soft-deleted rows are absent.
				opts.Ignore = []string{cdctable.ColPosition, cdctable.ColOp, cdctable.ColCommitTime, cdctable.ColDeleted}
				if l, err := cdctable.LayoutOf(snap.Metadata()); err == nil && l.DeletedField >= 0 {
					opts.DeletedColumn = cdctable.ColDeleted
				}
				res, err := tableops.Reconcile(ctx, t.Store(), snap, opts)
				if err != nil {
					// Bad input or I/O: exit 2, apart from the differences' exit 1.
					return &usageError{msg: fmt.Sprintf("reconciling %s with %s: %v", loc, *against, err)}
				}
				printReconcile(e.stdout, loc, *against, res)
				if !res.Equal() {
					return errors.New("the table and the file differ")
				}
				return nil
			}
		},
	}
}

// printReconcile prints the counts, each kind's samples under it.
func printReconcile(w io.Writer, loc, against string, res *tableops.ReconcileResult) {
	fmt.Fprintf(w, "%s: %d rows; %s: %d rows; compared %s\n", loc, res.TableRows, against, res.FileRows,
		strings.Join(res.Compared, ", "))
	kinds := []struct {
		what    string
		n       int64
		samples []string
	}{
		{"missing (in the file, not in the table)", res.Missing, res.MissingSamples},
		{"extra (in the table, not in the file)", res.Extra, res.ExtraSamples},
		{"different", res.Different, res.DifferentSamples},
	}
	for _, k := range kinds {
		fmt.Fprintf(w, "%s: %d\n", k.what, k.n)
		for _, s := range k.samples {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if res.DuplicateTable+res.DuplicateFile > 0 {
		fmt.Fprintf(w, "duplicate keys (rows beyond the first of their key): table %d, file %d\n", res.DuplicateTable, res.DuplicateFile)
	}
	if res.Equal() {
		fmt.Fprintln(w, "equal")
	}
}
