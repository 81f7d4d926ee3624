package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func optimizeCommand() command {
	return command{
		name:    "optimize",
		args:    "TABLE",
		summary: "compact small files and purge deletion vectors (OPTIMIZE, dataChange=false)",
		example: "cdc2delta optimize ./tables/sales/dbo/orders\ncdc2delta optimize --order-by-key --target-size 256MiB s3://lake/sales/dbo/orders\n" +
			"cdc2delta optimize --zorder-by customer_id ./tables/sales/dbo/orders   # OPTIMIZE ... ZORDER BY (customer_id)",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			target := fs.String("target-size", "128MiB", "target size of the compacted files; smaller files are compacted")
			zorderBy := fs.String("zorder-by", "", "rewrite every file along a Z-order curve over these data `columns` (comma-separated), "+
				"so that queries filtering on them skip files (OPTIMIZE ZORDER BY); a partition's rows are held in memory at once")
			orderByKey := fs.Bool("order-by-key", false, "sort rows by the table's key columns (property "+cdctable.PropKeyColumns+")")
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
				opts := tableops.OptimizeOptions{TargetSize: size}
				if *orderByKey {
					if opts.OrderBy, err = cdctable.KeyColumns(snap.Metadata()); err != nil {
						return usagef("--order-by-key: the table has no valid %s property", cdctable.PropKeyColumns)
					}
				}
				if *zorderBy != "" {
					if *orderByKey {
						return usagef("give --order-by-key or --zorder-by, not both")
					}
					for c := range strings.SplitSeq(*zorderBy, ",") {
						if c = strings.TrimSpace(c); c == "" {
							return usagef("--zorder-by %q names an empty column", *zorderBy)
						}
						opts.ZOrderBy = append(opts.ZOrderBy, c)
					}
				}
				m, err := tableops.Optimize(ctx, t, snap, opts)
				if err != nil {
					return fmt.Errorf("optimizing %s: %w", loc, err)
				}
				if m.NumRemovedFiles == 0 {
					fmt.Fprintln(e.stdout, "nothing to optimize")
					return nil
				}
				fmt.Fprintf(e.stdout, "compacted %s into %d (%s purged)\n",
					plural(int(m.NumRemovedFiles), "file"), m.NumAddedFiles, plural(int(m.NumDeletionVectorsRemoved), "deletion vector"))
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
