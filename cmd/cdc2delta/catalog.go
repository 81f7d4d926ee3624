package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog/glue"
	"github.com/cdc2delta/cdc2delta/processor/catalog/hive"
	"github.com/cdc2delta/cdc2delta/processor/catalog/unity"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// newCatalog builds the configured catalog and the name its errors use.
func newCatalog(ctx context.Context, k config.Catalog) (catalog.Catalog, string, error) {
	switch k.Type {
	case config.CatalogUnity:
		token, err := secretOrFile(k.Token, k.TokenFile, "catalog.token_file")
		if err != nil {
			return nil, "", err
		}
		c, err := unity.New(unity.Options{Endpoint: k.Endpoint, Token: token})
		if err != nil {
			return nil, "", err
		}
		return c, c.Name(), nil
	case config.CatalogGlue:
		secret, err := secretOrFile(k.SecretAccessKey, k.SecretAccessKeyFile, "catalog.secret_access_key_file")
		if err != nil {
			return nil, "", err
		}
		c, err := glue.New(ctx, glue.Options{Region: k.Region, Endpoint: k.Endpoint, CatalogID: k.CatalogID,
			AccessKeyID: k.AccessKeyID, SecretAccessKey: secret})
		if err != nil {
			return nil, "", err
		}
		name := "AWS Glue"
		if k.Endpoint != "" {
			name = "Glue at " + k.Endpoint
		}
		return c, name, nil
	case config.CatalogHive:
		c, err := hive.New(hive.Options{URIs: k.URIs})
		if err != nil {
			return nil, "", err
		}
		return c, "Hive Metastore at " + strings.Join(k.URIs, ","), nil
	}
	return nil, "", usagef("catalog.type: %q is not unity, glue or hive", k.Type)
}

// secretOrFile is the secret, or the trimmed content of file (a mounted
// secret) when it is set.
func secretOrFile(s config.Secret, file, path string) (string, error) {
	if file == "" {
		return s.Reveal(), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: reading %s: %w", path, file, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// catalogLocation is a table path as engines address it in a catalog: URLs
// stay, local directories become file:// URLs of their absolute path.
func catalogLocation(path string) string {
	if strings.Contains(path, "://") {
		return strings.TrimRight(path, "/")
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return "file://" + filepath.ToSlash(path)
}

// catalogName makes a catalog.Name of a configured name's parts.
func catalogName(parts []string) catalog.Name {
	if len(parts) == 3 {
		return catalog.Name{Catalog: parts[0], Schema: parts[1], Table: parts[2]}
	}
	if len(parts) == 2 {
		return catalog.Name{Schema: parts[0], Table: parts[1]}
	}
	return catalog.Name{Table: strings.Join(parts, ".")}
}

// catalogSource names the tables in the catalog: the name template (and
// overrides) for a table; its name with "_changes" for its change log and
// "_history" for its history table beside it. A history table at the
// table's own path (history: only) takes the table's name.
func catalogSource(k config.Catalog) func(src route.TableSource, path, role string) (catalog.Source, bool) {
	return func(src route.TableSource, path, role string) (catalog.Source, bool) {
		parts, ok := k.TableName(configSource(src))
		if !ok || len(parts) != k.Parts() {
			return catalog.Source{}, false
		}
		n := catalogName(parts)
		switch role {
		case catalog.RoleChangeLog:
			n.Table += "_changes"
		case catalog.RoleHistory:
			if path != src.Path {
				n.Table += "_history"
			}
		}
		return catalog.Source{Name: n, Location: catalogLocation(path), Role: role}, true
	}
}

// catalogLane is one configured catalog and the registrar that keeps its
// tables: each catalog registers in its own lane, so one that is down or
// refusing holds only its own tables' registration.
type catalogLane struct {
	k config.NamedCatalog
	r *catalog.Registrar
}

// newRegistrars builds the registrars of `run`, one per enabled catalog
// (none without a catalog).
func newRegistrars(ctx context.Context, c config.Config, logger *slog.Logger, reg prometheus.Registerer) ([]catalogLane, error) {
	var out []catalogLane
	for _, k := range c.EnabledCatalogs() {
		cat, dep, err := newCatalog(ctx, k.Catalog)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", catalogPath(k.Name), err)
		}
		r, err := catalog.NewRegistrar(cat, catalog.RegistrarOptions{
			Name: k.Name, Dependency: dep, RequestTimeout: time.Duration(k.RequestTimeout), // zero: the registrar's default
			RetryBudget: time.Duration(c.Retry.Budget),
			Backoff:     backoff.Policy{Min: time.Second, Max: time.Minute}, Logger: logger.With("catalog", k.Name), Registerer: reg,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, catalogLane{k: k, r: r})
	}
	return out, nil
}

// catalogPath is the configuration path of the catalog named name.
func catalogPath(name string) string {
	if name == config.DefaultCatalog {
		return "catalog"
	}
	return "catalogs." + name
}

// catalogRoute gives a table the registrar of its catalog
// (tables.defaults.catalog, tables.overrides[].catalog) and its name
// there; nil when it is not registered.
func catalogRoute(c config.Config, lanes []catalogLane) func(src route.TableSource, path, role string) (*catalog.Registrar, catalog.Source) {
	names := map[string]func(route.TableSource, string, string) (catalog.Source, bool){}
	regs := map[string]*catalog.Registrar{}
	for _, l := range lanes {
		names[l.k.Name], regs[l.k.Name] = catalogSource(l.k.Catalog), l.r
	}
	return func(src route.TableSource, path, role string) (*catalog.Registrar, catalog.Source) {
		name, ok := c.CatalogOf(configSource(src))
		if !ok || regs[name] == nil {
			return nil, catalog.Source{}
		}
		s, ok := names[name](src, path, role)
		if !ok {
			return nil, catalog.Source{}
		}
		return regs[name], s
	}
}

// registerControl hands the control table's snapshot to the registrar of
// catalog k every interval until ctx ends: the control table is kept
// beside the pipeline, by its own writer.
func registerControl(ctx context.Context, c config.Config, k config.Catalog, r *catalog.Registrar, logger *slog.Logger) {
	parts := strings.Split(k.ControlName, ".")
	src := catalog.Source{Name: catalogName(parts), Location: catalogLocation(c.Control.Path), Role: catalog.RoleControl}
	open := storeOpener(c.Storage)
	every := max(time.Duration(c.Control.Interval), 10*time.Second)
	for {
		if snap, err := readSnapshot(ctx, open, c.Control.Path); err == nil {
			r.Committed(src, snap)
		} else if !errors.Is(err, deltalog.ErrNotExist) && ctx.Err() == nil {
			logger.Warn("reading the control table to register it", "path", c.Control.Path, "err", err)
		}
		if backoff.Sleep(ctx, every) != nil {
			return
		}
	}
}

// readSnapshot is the latest snapshot of the table at path.
func readSnapshot(ctx context.Context, open func(context.Context, string) (deltalog.Store, error), path string) (*deltalog.Snapshot, error) {
	store, err := open(ctx, path)
	if err != nil {
		return nil, err
	}
	tbl, err := deltalog.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	return tbl.Snapshot(ctx)
}
