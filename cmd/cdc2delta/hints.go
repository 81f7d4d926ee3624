package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/readers"
)

// readerHints are the quickstart's lines for reading the table at path with
// other engines: the tested recipes of delta-rs and DuckDB (pinned pip lines;
// the DuckDB extension is loaded from its wheel), and whether
// DeltaTable(path).to_pandas() and polars open the table, with the settings
// that make them.
func readerHints(ctx context.Context, path string) string {
	var b strings.Builder
	for _, r := range readers.Recipes {
		if r.Reader != "delta-rs" && r.Reader != "DuckDB" {
			continue
		}
		fmt.Fprintf(&b, "  # %s: %s\n  %s\n", r.Reader, r.Install, r.Command(path))
	}
	verdicts := tableVerdicts(ctx, path)
	if len(verdicts) == 0 {
		return b.String()
	}
	var refused []string
	var fixes []string
	for _, v := range verdicts {
		if v.Outcome == readers.Reads || v.Outcome == readers.NotApplicable {
			continue
		}
		switch v.API.ID() {
		case "deltars.to_pandas", "polars.read_delta":
			refused = append(refused, v.API.Reader+" "+v.API.Name)
			for _, f := range strings.Split(v.Fix, " and ") {
				if !strings.Contains(strings.Join(fixes, " "), f) {
					fixes = append(fixes, f)
				}
			}
		}
	}
	if len(refused) == 0 {
		fmt.Fprintf(&b, "\nDeltaTable(path).to_pandas() and polars read these tables too:\n  python -c \"from deltalake import DeltaTable; print(DeltaTable(%s).to_pandas())\"\n", readers.PyString(path))
	} else {
		flags := strings.NewReplacer("deletion_vectors: false", "--deletion-vectors=false", "column_names: portable", "--column-names=portable").Replace(strings.Join(fixes, " "))
		fmt.Fprintf(&b, "\n%s refuse these tables (see describe). Tables they read: run the quickstart again with a new --dir and %s\n"+
			"(in a config, tables.defaults: %s). Which reader opens which table: docs/readers.md.\n",
			strings.Join(refused, " and "), flags, strings.Join(fixes, ", "))
	}
	return b.String()
}

// tableVerdicts are the reader verdicts on the table at path (none if it cannot be read).
func tableVerdicts(ctx context.Context, path string) []readers.Verdict {
	st, err := storeOpener(config.Storage{})(ctx, path)
	if err != nil {
		return nil
	}
	t, err := deltalog.Open(ctx, st)
	if err != nil {
		return nil
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil
	}
	return readers.Verdicts(readers.TableOf(snap.Protocol(), snap.Metadata()))
}
