package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

func catalogCommand() command {
	return command{
		name:    "catalog",
		args:    "sync",
		summary: "register or repair every table in its configured catalog now; print what changed",
		example: "cdc2delta catalog sync --config cdc2delta.yaml   # exit 1 when a name is another table's",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			cf := addConfigFlags(fs, allOverrides...)
			timeout := addTimeoutFlag(fs)
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 || args[0] != "sync" {
					return usagef("catalog: give the subcommand: catalog sync --config FILE")
				}
				c, err := cf.load(nil, e.lookup)
				if err != nil {
					return err
				}
				return catalogSync(ctx, e.stdout, c, *timeout.d)
			}
		},
	}
}

// syncTarget is one table catalog sync registers.
type syncTarget struct {
	src  catalog.Source
	path string
}

// catalogSync registers every table the configuration routes to (the
// configured topics, or those matching topic_regex), their change logs and
// the control table, idempotently, in the catalog each belongs to, and
// prints one line per table (under a line naming the catalog when there
// are several). A catalog that fails does not stop the others'.
func catalogSync(ctx context.Context, w io.Writer, c config.Config, kafkaTimeout time.Duration) error {
	cats := c.EnabledCatalogs()
	if len(cats) == 0 {
		return usagef("catalog.type is not set and catalogs: is empty: there is no catalog to register the tables in")
	}
	targets, err := syncTargets(ctx, c, kafkaTimeout)
	if err != nil {
		return err
	}
	open := storeOpener(c.Storage)
	counts := map[catalog.Outcome]int{}
	var failed, total int
	for _, k := range cats {
		cat, dep, err := newCatalog(ctx, k.Catalog)
		if err != nil {
			return fmt.Errorf("%s: %w", catalogPath(k.Name), err)
		}
		if len(cats) > 1 {
			fmt.Fprintf(w, "catalog %s (%s):\n", k.Name, dep)
		}
		timeout := time.Duration(k.RequestTimeout)
		if timeout <= 0 {
			timeout = catalog.DefaultRequestTimeout
		}
		for _, t := range targets[k.Name] {
			total++
			snap, err := readSnapshot(ctx, open, t.path)
			if errors.Is(err, deltalog.ErrNotExist) {
				fmt.Fprintf(w, "%-9s  %s  %s  (no table yet: registered after its first commit)\n", "absent", t.src.Name, t.src.Location)
				continue
			}
			if err != nil {
				failed++
				fmt.Fprintf(w, "%-9s  %s  %s  reading the table: %v\n", catalog.Failed, t.src.Name, t.src.Location, err)
				continue
			}
			out, diff, err := catalog.Register(ctx, cat, catalog.EntryOf(t.src, snap), timeout, dep)
			counts[out]++
			switch {
			case err != nil:
				failed++
				fmt.Fprintf(w, "%-9s  %s  %s  %v\n", out, t.src.Name, t.src.Location, err)
			case len(diff) > 0:
				fmt.Fprintf(w, "%-9s  %s  %s  (%s)\n", out, t.src.Name, t.src.Location, strings.Join(diff, ", "))
			default:
				fmt.Fprintf(w, "%-9s  %s  %s\n", out, t.src.Name, t.src.Location)
			}
		}
	}
	fmt.Fprintf(w, "%d created, %d updated, %d unchanged, %d conflicts, %d errors\n",
		counts[catalog.Created], counts[catalog.Updated], counts[catalog.Unchanged], counts[catalog.Conflict], failed-counts[catalog.Conflict])
	if failed > 0 {
		return fmt.Errorf("%d of %d tables not registered (see above)", failed, total)
	}
	return nil
}

// syncTargets lists the tables to register by the name of their catalog,
// each list sorted by name.
func syncTargets(ctx context.Context, c config.Config, kafkaTimeout time.Duration) (map[string][]syncTarget, error) {
	topics := c.Kafka.Topics
	if c.Kafka.TopicRegex != "" {
		cl, adm, err := newAdmin(c.Kafka)
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		if topics, err = resolveTopics(ctx, adm, kafkaTimeout, c.Kafka); err != nil {
			return nil, fmt.Errorf("listing the topics that match kafka.topic_regex: %w", err)
		}
	}
	router, err := route.NewRouter(c.Tables.Path)
	if err != nil {
		return nil, usagef("tables.path: %v", err)
	}
	names := map[string]func(route.TableSource, string, string) (catalog.Source, bool){}
	for _, k := range c.EnabledCatalogs() {
		names[k.Name] = catalogSource(k.Catalog)
	}
	seen := map[string]bool{}
	out := map[string][]syncTarget{}
	add := func(src route.TableSource, path, role string) {
		if seen[path] {
			return
		}
		seen[path] = true
		cat, ok := c.CatalogOf(configSource(src))
		if !ok {
			return
		}
		if s, ok := names[cat](src, path, role); ok {
			out[cat] = append(out[cat], syncTarget{src: s, path: path})
		}
	}
	for _, topic := range topics {
		src, err := router.Source(topic)
		if err != nil {
			return nil, fmt.Errorf("routing topic %s: %w", topic, err)
		}
		s := c.Tables.Settings(configSource(src))
		role := catalog.RoleTable
		if s.History.Only() {
			role = catalog.RoleHistory // the history table is the table (history: only)
		}
		add(src, src.Path, role)
		if s.ChangeLog {
			add(src, changeLogPath(src.Path), catalog.RoleChangeLog)
		}
		if s.History == config.HistoryBeside {
			add(src, historyPath(s.HistoryPath, src), catalog.RoleHistory)
		}
	}
	for _, k := range c.EnabledCatalogs() {
		if k.ControlName != "" && c.Control.Path != "" {
			out[k.Name] = append(out[k.Name], syncTarget{path: c.Control.Path, src: catalog.Source{Name: catalogName(strings.Split(k.ControlName, ".")),
				Location: catalogLocation(c.Control.Path), Role: catalog.RoleControl}})
		}
	}
	for _, ts := range out {
		slices.SortFunc(ts, func(a, b syncTarget) int { return strings.Compare(a.src.Name.String(), b.src.Name.String()) })
	}
	return out, nil
}
