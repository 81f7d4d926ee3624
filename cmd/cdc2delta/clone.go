package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/internal/urlcred"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

func cloneCommand() command {
	return command{
		name:    "clone",
		args:    "SRC DEST",
		summary: "copy a version of a table to a new table, txn positions and tombstones included (DEEP or SHALLOW CLONE)",
		example: "cdc2delta clone --deep --version 12 ./tables/sales/dbo/orders ./tables/restore/orders\n" +
			"# check ./tables/restore/orders, then swap it in as docs/OPERATIONS.md describes\n" +
			"cdc2delta clone --shallow --version 12 ./tables/sales/dbo/orders ./tables/check/orders_v12\n" +
			"# a read-only look at version 12 that copies no file; the source's vacuum keeps its files",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			tt := declareTimeTravel(fs, "clone version `N` of SRC (default: the latest)",
				"clone the latest version of SRC committed at or before this `time` (RFC 3339, e.g. 2026-01-02T15:04:05Z, or a date 2026-01-02)")
			deep := fs.Bool("deep", false, "copy SRC's data and deletion vector files into DEST (DEEP CLONE)")
			shallow := fs.Bool("shallow", false, "copy no file: DEST's log names SRC's files by absolute URI (SHALLOW CLONE). "+
				"cdc2delta reads DEST but does not write it, and SRC's vacuum keeps the files DEST names")
			return func(ctx context.Context, args []string) error {
				if len(args) != 2 {
					return usagef("expected SRC and DEST tables, got %d arguments", len(args))
				}
				srcLoc, dstLoc := args[0], args[1]
				if *deep == *shallow {
					return usagef("pass one of --deep (files copied) or --shallow (DEST names SRC's files)")
				}
				src, err := sf.openReader(ctx, srcLoc)
				if err != nil {
					return err
				}
				snap, err := tt.snapshot(ctx, src, srcLoc)
				if err != nil {
					return err
				}
				source := urlcred.Redact(srcLoc)
				if !strings.Contains(dstLoc, "://") {
					if err := os.MkdirAll(dstLoc, 0o755); err != nil {
						return fmt.Errorf("creating %s: %w", dstLoc, err)
					}
				}
				if !strings.Contains(srcLoc, "://") {
					if abs, err := filepath.Abs(srcLoc); err == nil {
						source = abs
					}
				}
				dst, err := sf.openTable(ctx, dstLoc)
				if err != nil {
					return err
				}
				record := dstLoc
				if !strings.Contains(dstLoc, "://") {
					if abs, err := filepath.Abs(dstLoc); err == nil {
						record = abs
					}
				}
				tombstones := 0
				m, err := tableops.Clone(ctx, src, snap, dst, tableops.CloneOptions{Source: source, Shallow: *shallow,
					BeforeCommit: func(ctx context.Context) error {
						if *shallow {
							// Recorded before DEST exists: the source's vacuum never misses it.
							if err := tableops.RecordShallowClone(ctx, src.Store(), tableops.ShallowCloneRecord{
								Location: record, SourceVersion: snap.Version(), Created: time.Now().UTC(),
							}); err != nil {
								return err
							}
						}
						n, err := merge.CloneTombstones(ctx, src, snap.Version(), dst.Store())
						tombstones = n
						return err
					}})
				if errors.Is(err, tableops.ErrTableExists) {
					return usagef("%s already holds a table: clone into a new location", dstLoc)
				}
				if err != nil {
					return fmt.Errorf("cloning %s at version %d to %s: %w", srcLoc, snap.Version(), dstLoc, err)
				}
				if *shallow {
					fmt.Fprintf(e.stdout, "cloned %s at version %d to %s (shallow): %s named by absolute URI, %s, %s carried\n",
						srcLoc, snap.Version(), dstLoc, plural(m.SourceNumFiles, "file"),
						plural(len(snap.Txns()), "txn position"), plural(tombstones, "tombstone"))
					return nil
				}
				fmt.Fprintf(e.stdout, "cloned %s at version %d to %s: %s copied (%d bytes), %s, %s carried\n",
					srcLoc, snap.Version(), dstLoc, plural(m.NumCopiedFiles, "file"), m.CopiedFilesSize,
					plural(len(snap.Txns()), "txn position"), plural(tombstones, "tombstone"))
				return nil
			}
		},
	}
}
