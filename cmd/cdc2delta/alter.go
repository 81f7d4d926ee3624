package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/tableops"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

func alterCommand() command {
	return command{
		name:    "alter",
		args:    "TABLE",
		summary: "set or unset table properties, column mapping included (ALTER TABLE SET TBLPROPERTIES)",
		example: "cdc2delta alter ./tables/sales/dbo/orders --set delta.logRetentionDuration='7 days'\n" +
			"cdc2delta alter ./tables/sales/dbo/orders --set delta.columnMapping.mode=name --upgrade-protocol\n" +
			"cdc2delta alter ./tables/sales/dbo/orders --rename-column qty=quantity   # needs column mapping",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			var set, unset listFlag
			fs.Var(&set, "set", "property `key=value` to set (repeatable); delta.* keys must be Delta's")
			fs.Var(&unset, "unset", "property `key` to remove (repeatable)")
			rename := fs.String("rename-column", "", "rename a column `OLD=NEW` (ALTER TABLE RENAME COLUMN): it keeps its values; needs column mapping")
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
				if *rename != "" {
					if len(set) > 0 || len(unset) > 0 {
						return usagef("give --rename-column alone, not with --set or --unset")
					}
					return renameColumn(ctx, e, sf, loc, *rename)
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

// renameColumn runs alter --rename-column OLD=NEW. A column named for the source by
// its metadata (a portable name) is then the source's NEW column.
func renameColumn(ctx context.Context, e *env, sf *storeFlags, loc, arg string) error {
	from, to, ok := strings.Cut(arg, "=")
	if !ok || from == "" || to == "" {
		return usagef("--rename-column %q is not OLD=NEW", arg)
	}
	t, snap, err := sf.openLatest(ctx, loc)
	if err != nil {
		return err
	}
	v, err := tableops.RenameColumn(ctx, t, snap, from, to, func(f *deltalog.StructField) { delete(f.Metadata, cdctable.FieldMetaSource) })
	if pe, ok := errors.AsType[*deltalog.PropertyError](err); ok {
		return usagef("%v\n  %s alter %s --set delta.columnMapping.mode=name --upgrade-protocol", pe, e.selfCmd(), shellQuote(loc))
	}
	if err != nil {
		return fmt.Errorf("renaming a column of %s: %w", loc, err)
	}
	fmt.Fprintf(e.stdout, "renamed column %s to %s in %s as version %d; its data files are unchanged\n", from, to, loc, v)
	return nil
}
