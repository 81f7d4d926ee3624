package processor

import "github.com/cdc2delta/cdc2delta/processor/catalog"

// registerTable hands the latest snapshots of the table, its change log and
// its history table to the registrar of their catalog, which registers them in the
// background when their entries changed (ADR 0047). It never waits for the
// catalog.
func (p *Processor) registerTable(t *table) {
	name := p.opts.CatalogSource
	if name == nil {
		return
	}
	role := catalog.RoleTable
	if t.histOnly {
		role = catalog.RoleHistory // under the table's own name (history: only)
	}
	if r, src := name(t.src, t.path, role); r != nil && t.sink != nil {
		r.Committed(src, t.sink.Snapshot())
	}
	if t.log != nil {
		if r, src := name(t.src, t.logPath, catalog.RoleChangeLog); r != nil {
			r.Committed(src, t.log.Snapshot())
		}
	}
	if t.hist != nil {
		if r, src := name(t.src, t.histPath, catalog.RoleHistory); r != nil {
			r.Committed(src, t.hist.Snapshot())
		}
	}
}
