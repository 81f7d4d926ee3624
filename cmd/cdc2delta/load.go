package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

func loadCommand() command {
	return command{
		name:    "load",
		args:    "TABLE",
		summary: "load a snapshot file (CSV or Parquet) into a table at the source position it represents, before the CDC feed",
		example: "cdc2delta load ./tables/sales/dbo/orders --from orders.parquet --position 0000002b:00000d98:0002\n" +
			"cdc2delta load s3://lake/sales/dbo/orders --from orders.csv --position 0x0000002B00000D980002",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			from := fs.String("from", "", "the snapshot: a `file` ending .csv (with a header) or .parquet, columns named as the table's (required)")
			position := fs.String("position", "", "the source `position` the snapshot is complete through: the LSN it was read at, as\n"+
				"Debezium prints it (0000002b:00000d98:0002) or as SQL Server does (0x0000002B00000D980002),\n"+
				"or a full position commit/change/serial (required); changes at or below it are skipped from now on")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				if *from == "" || *position == "" {
					return usagef("--from FILE and --position POS are required")
				}
				pos, err := parseLoadPosition(*position)
				if err != nil {
					return usagef("--position: %v", err)
				}
				t, snap, err := sf.openLatest(ctx, loc)
				if err != nil {
					return err
				}
				if _, err := cdctable.LayoutOf(snap.Metadata()); errors.Is(err, cdctable.ErrHistoryTable) {
					return historyRefusal(loc, "load fills")
				} else if err != nil {
					return usagef("%s is not a table the pipeline created (%v): run the pipeline until it creates the table, then load", loc, err)
				}
				rows, err := tableops.OpenFileRows(ctx, *from, snap.Schema())
				if err != nil {
					return usagef("%v", err)
				}
				defer rows.Close()
				start := time.Now()
				res, err := merge.Load(ctx, t.Store(), merge.LoadOptions{
					Position: pos, Columns: rows.Columns(), Next: rows.Next,
					Parameters: map[string]string{"cdc2delta.loadPosition": fmt.Sprintf("%q", *position)},
					Progress: func(r merge.LoadResult) {
						printLoadProgress(e.stdout, r, rows.Offset(), rows.Size(), time.Since(start))
					},
				})
				if errors.Is(err, merge.ErrLoadColumns) || errors.Is(err, merge.ErrLoadOlder) ||
					errors.Is(err, tableops.ErrFileType) || errors.Is(err, tableops.ErrFileFormat) {
					return usagef("loading %s into %s: %v", *from, loc, err)
				}
				if err != nil {
					return fmt.Errorf("loading %s into %s: %w", *from, loc, err)
				}
				fmt.Fprintf(e.stdout, "loaded %d rows into %s at version %d, position %s", res.Rows, loc, res.Version, *position)
				if res.Newer > 0 {
					fmt.Fprintf(e.stdout, "; left out %d rows whose key the table holds a newer change of", res.Newer)
				}
				fmt.Fprintln(e.stdout, "\nchanges at or below that position are skipped from now on; start the pipeline")
				return nil
			}
		},
	}
}

// printLoadProgress prints one progress line.
func printLoadProgress(w io.Writer, r merge.LoadResult, read, size int64, took time.Duration) {
	pct := 100.0
	if size > 0 {
		pct = 100 * float64(read) / float64(size)
	}
	fmt.Fprintf(w, "written %d rows in %d files (%s of %s read, %.0f%%) in %s\n",
		r.Rows, r.Files, humanBytes(read), humanBytes(size), pct, took.Round(time.Second))
}

// parseLoadPosition reads a load position: an LSN stands for every change
// of every transaction committed at or before it (the largest position of
// that commit LSN); a full position is taken as it is.
func parseLoadPosition(s string) (codecs.Position, error) {
	if strings.Contains(s, "/") {
		return codecs.ParsePosition(s)
	}
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok && len(h) == 20 {
		s = h[0:8] + ":" + h[8:16] + ":" + h[16:20]
	}
	lsn, err := codecs.ParseLSN(s)
	if err != nil {
		return codecs.Position{}, fmt.Errorf("%q is not an LSN (0000002b:00000d98:0002 or 0x0000002B00000D980002) nor a position commit/change/serial", s)
	}
	p := codecs.Position{Commit: lsn, Serial: math.MaxInt64}
	for i := range p.Change {
		p.Change[i] = 0xff
	}
	return p, nil
}
