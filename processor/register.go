package processor

import "github.com/cdc2delta/cdc2delta/processor/catalog"

// registerTable hands the latest snapshots of the table, its change log and
// its history table to the catalog's registrar, which registers them in the
// background when their entries changed (ADR 0047). It never waits for the
// catalog.
func (p *Processor) registerTable(t *table) {
	c, name := p.opts.Catalog, p.opts.CatalogSource
	if c == nil || name == nil {
		return
	}
	role := catalog.RoleTable
	if t.histOnly {
		role = catalog.RoleHistory // under the table's own name (history: only)
	}
	if src, ok := name(t.src, t.path, role); ok && t.sink != nil {
		c.Committed(src, t.sink.Snapshot())
	}
	if t.log != nil {
		if src, ok := name(t.src, t.logPath, catalog.RoleChangeLog); ok {
			c.Committed(src, t.log.Snapshot())
		}
	}
	if t.hist != nil {
		if src, ok := name(t.src, t.histPath, catalog.RoleHistory); ok {
			c.Committed(src, t.hist.Snapshot())
		}
	}
}
