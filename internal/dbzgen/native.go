package dbzgen

import (
	"errors"
	"fmt"
	"time"

	"github.com/linkedin/goavro/v2"
)

// keyNative is the goavro form of the key record of a row image.
func (t *Table) keyNative(row Row) (map[string]any, error) {
	if row == nil {
		return nil, fmt.Errorf("%w: no row image to take the key from", ErrBadEvent)
	}
	m := make(map[string]any, len(t.key))
	for _, k := range t.key {
		c := t.columns[k]
		v, err := c.native(row[c.Name], t.opts.IgnoreDefaultForNullables)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		m[c.field] = v
	}
	return m, nil
}

// rowNative is the goavro form of a Value record; nil for a nil row.
func (t *Table) rowNative(row Row) (any, error) {
	if row == nil {
		return nil, nil
	}
	for name := range row {
		if !t.declared(name) {
			return nil, fmt.Errorf("%w: unknown column %q", ErrBadValue, name)
		}
	}
	m := make(map[string]any, len(t.columns))
	for _, c := range t.columns {
		v, err := c.native(row[c.Name], t.opts.IgnoreDefaultForNullables)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		m[c.field] = v
	}
	return goavro.Union(t.topic+".Value", m), nil
}

// declared reports whether name is a column of the definition, captured or
// not (sql_variant columns are declared but dropped).
func (t *Table) declared(name string) bool {
	for _, c := range t.def.Columns {
		if c.Name == name {
			return true
		}
	}
	return false
}

// native converts one column value, wrapping it in its union branch when the
// column is nullable. A NULL in a column with a SQL default becomes the
// default unless ignoreDefault (the converter's ignore.default.for.nullables).
func (c tableColumn) native(v any, ignoreDefault bool) (any, error) {
	if v == nil && c.typ.connect.hasDef && (!ignoreDefault || !c.Nullable) {
		v = c.Default // what the converter does with an explicit NULL
	}
	if v == nil {
		if !c.Nullable {
			return nil, fmt.Errorf("%w: NULL in NOT NULL column", ErrBadValue)
		}
		return nil, nil
	}
	n, err := c.typ.encode(v)
	if errors.Is(err, errNullInstead) && c.Nullable {
		return nil, nil // Debezium 3.6+: null and a warning
	}
	if err != nil {
		return nil, err
	}
	if c.Nullable {
		return goavro.Union(c.typ.connect.branch(), n), nil
	}
	return n, nil
}

func (t *Table) valueNative(ev Event) (map[string]any, error) {
	switch ev.Op {
	case OpCreate, OpRead:
		if ev.After == nil || ev.Before != nil {
			return nil, fmt.Errorf("%w: op %c needs after and no before", ErrBadEvent, ev.Op)
		}
	case OpUpdate:
		if ev.After == nil || ev.Before == nil {
			return nil, fmt.Errorf("%w: op u needs before and after", ErrBadEvent)
		}
	case OpDelete:
		if ev.Before == nil || ev.After != nil {
			return nil, fmt.Errorf("%w: op d needs before and no after", ErrBadEvent)
		}
	case OpTruncate:
		if ev.Before != nil || ev.After != nil {
			return nil, fmt.Errorf("%w: op t carries no rows", ErrBadEvent)
		}
	default:
		return nil, fmt.Errorf("%w: unknown op %q", ErrBadEvent, ev.Op)
	}
	before, err := t.rowNative(ev.Before)
	if err != nil {
		return nil, fmt.Errorf("before: %w", err)
	}
	after, err := t.rowNative(ev.After)
	if err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	m := map[string]any{
		"before":      before,
		"after":       after,
		"source":      t.sourceNative(ev.Source),
		"op":          string(ev.Op),
		"transaction": nil,
		"ts_ms":       nil,
	}
	if ev.Transaction != nil {
		m["transaction"] = goavro.Union("event.block", map[string]any{
			"id":                    ev.Transaction.ID,
			"total_order":           ev.Transaction.TotalOrder,
			"data_collection_order": ev.Transaction.DataCollectionOrder,
		})
	}
	if t.opts.Layout != Layout25 {
		m["ts_us"], m["ts_ns"] = nil, nil
	}
	if !ev.ProcessedAt.IsZero() {
		m["ts_ms"] = goavro.Union("long", ev.ProcessedAt.UnixMilli())
		if t.opts.Layout != Layout25 {
			m["ts_us"] = goavro.Union("long", ev.ProcessedAt.UnixMicro())
			m["ts_ns"] = goavro.Union("long", ev.ProcessedAt.UnixNano())
		}
	}
	return m, nil
}

func (t *Table) sourceNative(s Source) map[string]any {
	optString := func(v string) any {
		if v == "" {
			return nil
		}
		return goavro.Union("string", v)
	}
	lsn := func(l LSN) any {
		if l.IsZero() {
			return nil
		}
		return goavro.Union("string", l.String())
	}
	if s.Time.IsZero() {
		s.Time = time.Unix(0, 0) // keep ts_ns in range
	}
	snapshot := s.Snapshot
	if snapshot == "" && !t.opts.IgnoreDefaultForNullables {
		snapshot = "false" // the Connect default the converter substitutes
	}
	m := map[string]any{
		"version":    t.opts.Version,
		"connector":  "sqlserver",
		"name":       t.opts.Prefix,
		"ts_ms":      s.Time.UnixMilli(),
		"snapshot":   optString(snapshot),
		"db":         t.def.Database,
		"sequence":   nil,
		"schema":     t.def.Schema,
		"table":      t.def.Name,
		"change_lsn": lsn(s.ChangeLSN),
		"commit_lsn": lsn(s.CommitLSN),
	}
	if s.SerialNo != 0 {
		m["event_serial_no"] = goavro.Union("long", s.SerialNo)
	} else {
		m["event_serial_no"] = nil
	}
	switch t.opts.Layout {
	case Layout25:
	case Layout26:
		m["ts_us"], m["ts_ns"] = s.Time.UnixMicro(), s.Time.UnixNano()
	default:
		m["ts_us"], m["ts_ns"] = goavro.Union("long", s.Time.UnixMicro()), goavro.Union("long", s.Time.UnixNano())
	}
	return m
}
