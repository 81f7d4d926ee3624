package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
)

func alterCommand() command {
	return command{
		name:    "alter",
		args:    "TABLE",
		summary: "set or unset table properties, column mapping included (ALTER TABLE SET TBLPROPERTIES)",
		example: "cdc2delta alter ./tables/sales/dbo/orders --set delta.logRetentionDuration='7 days'\n" +
			"cdc2delta alter ./tables/sales/dbo/orders --set delta.columnMapping.mode=name --upgrade-protocol",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			var set, unset listFlag
			fs.Var(&set, "set", "property `key=value` to set (repeatable); delta.* keys must be Delta's")
			fs.Var(&unset, "unset", "property `key` to remove (repeatable)")
			upgrade := fs.Bool("upgrade-protocol", false, "allow raising the table's protocol when a property needs it "+
				"(column mapping, deletion vectors, change data feed, append-only): readers and writers on an older Delta lose access")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				opts := tableops.AlterOptions{Unset: unset, UpgradeProtocol: *upgrade}
				for _, kv := range set {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return usagef("--set %q is not key=value", kv)
					}
					if opts.Set == nil {
						opts.Set = map[string]string{}
					}
					opts.Set[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), "'")
				}
				if len(set) > 0 == (len(unset) > 0) {
					return usagef("give --set key=value or --unset key (one of the two, as SET and UNSET TBLPROPERTIES are)")
				}
				t, snap, err := sf.openLatest(ctx, loc)
				if err != nil {
					return err
				}
				res, err := tableops.Alter(ctx, t, snap, opts)
				if pe, ok := errors.AsType[*deltalog.PropertyError](err); ok {
					return usagef("%v", pe)
				}
				if pu, ok := errors.AsType[*tableops.ProtocolUpgradeError](err); ok {
					return usagef("%v\nrun again with --upgrade-protocol once every reader and writer of %s supports %s",
						pu, loc, tableops.ProtocolString(pu.To))
				}
				if errors.Is(err, tableops.ErrNoChange) {
					fmt.Fprintln(e.stdout, "nothing to change: the table already has these properties")
					return nil
				}
				if err != nil {
					return fmt.Errorf("altering %s: %w", loc, err)
				}
				fmt.Fprintf(e.stdout, "altered %s as version %d\n", loc, res.Version)
				if res.MappedColumns > 0 {
					fmt.Fprintf(e.stdout, "column mapping enabled: %s mapped to their own names; data files are unchanged\n",
						plural(res.MappedColumns, "column"))
				}
				if res.Upgraded {
					fmt.Fprintf(e.stdout, "protocol upgraded to %s: readers and writers on a Delta that lacks it can no longer use the table\n",
						tableops.ProtocolString(res.Protocol))
				}
				return nil
			}
		},
	}
}
