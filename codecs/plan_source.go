package codecs

import (
	"fmt"
	"strconv"
)

// srcTarget names the source-block field a srcField fills.
type srcTarget uint8

const (
	srcNone srcTarget = iota
	srcDB
	srcSchema
	srcTable
	srcTsMs
	srcSnapshot
	srcChangeLSN
	srcCommitLSN
	srcSerial
	srcPgLSN      // PostgreSQL: lsn
	srcPgSequence // PostgreSQL: sequence
	srcFile       // MySQL/MariaDB: binlog file
	srcPos        // MySQL/MariaDB: binlog position
	srcRow        // MySQL/MariaDB: row in the binlog event
)

type srcField struct {
	target  srcTarget
	long    bool // value is a long (else a string)
	nullIdx int  // union branch index of null, or -1 for a plain type
	skip    skipFn
}

var srcTargets = map[string]srcTarget{
	"db": srcDB, "schema": srcSchema, "table": srcTable, "ts_ms": srcTsMs, "snapshot": srcSnapshot,
	"change_lsn": srcChangeLSN, "commit_lsn": srcCommitLSN, "event_serial_no": srcSerial,
	"lsn": srcPgLSN, "sequence": srcPgSequence, "file": srcFile, "pos": srcPos, "row": srcRow,
}

// buildSource plans the source block's reading and names the family whose
// order key it carries: PostgreSQL's when it has lsn, MySQL's when it has
// file and pos, SQL Server's otherwise.
func buildSource(node any, ns string, names map[string]map[string]any, sb *skipBuilder) ([]srcField, Source, error) {
	rec, ok := node.(map[string]any)
	if !ok || rec["type"] != "record" {
		return nil, 0, fmt.Errorf("source is not an inline record")
	}
	recNS := ns
	if s, ok := rec["namespace"].(string); ok {
		recNS = s
	}
	fields, _ := rec["fields"].([]any)
	out := make([]srcField, 0, len(fields))
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		name, _ := fm["name"].(string)
		sf := srcField{target: srcTargets[name], nullIdx: -1}
		if sf.target == srcNone {
			var err error
			if sf.skip, err = sb.build(fm["type"], recNS); err != nil {
				return nil, 0, fmt.Errorf("source.%s: %w", name, err)
			}
			out = append(out, sf)
			continue
		}
		prim, nullIdx, ok := scalarOf(fm["type"])
		if !ok {
			return nil, 0, fmt.Errorf("source.%s has type %v", name, fm["type"])
		}
		// Avro writes int and long alike.
		sf.long, sf.nullIdx = prim == "long" || prim == "int", nullIdx
		// The full path reads db/schema/table only as strings and
		// timestamps/serials only as longs (serial also as a string).
		switch sf.target {
		case srcDB, srcSchema, srcTable: // MySQL's table is optional (DDL events have none)
			ok = prim == "string"
		case srcTsMs, srcPgLSN, srcPos:
			ok = prim == "long"
		case srcSnapshot, srcChangeLSN, srcCommitLSN, srcPgSequence, srcFile:
			ok = prim == "string"
		case srcSerial:
			ok = prim == "long" || prim == "string"
		case srcRow:
			ok = prim == "int" || prim == "long"
		}
		if !ok {
			return nil, 0, fmt.Errorf("source.%s has type %v", name, fm["type"])
		}
		out = append(out, sf)
	}
	order, err := sourceFamily(out)
	return out, order, err
}

// sourceFamily names the family from the order-key fields present, refusing
// a block that carries only part of a key.
func sourceFamily(fields []srcField) (Source, error) {
	has := map[srcTarget]bool{}
	for _, f := range fields {
		has[f.target] = true
	}
	switch {
	case has[srcPgLSN] && has[srcPgSequence]:
		return SourcePostgres, nil
	case has[srcPgLSN]:
		return 0, fmt.Errorf("source has lsn but no sequence: PostgreSQL's lsn alone does not order transactions (Debezium 1.4 and later send sequence)")
	case has[srcFile] && has[srcPos] && has[srcRow]:
		return SourceMySQL, nil
	case has[srcFile] || has[srcPos]:
		return 0, fmt.Errorf("source has a partial binlog coordinate: want file, pos and row")
	}
	return SourceSQLServer, nil
}

// scalarOf recognises string/long/int, possibly as a two-branch union with null.
func scalarOf(t any) (prim string, nullIdx int, ok bool) {
	nullIdx = -1
	if u, isUnion := t.([]any); isUnion {
		if len(u) != 2 {
			return "", 0, false
		}
		switch {
		case u[0] == "null":
			nullIdx, t = 0, u[1]
		case u[1] == "null":
			nullIdx, t = 1, u[0]
		default:
			return "", 0, false
		}
	}
	if m, isMap := t.(map[string]any); isMap {
		t = m["type"]
	}
	prim, _ = t.(string)
	return prim, nullIdx, prim == "string" || prim == "long" || prim == "int"
}

// decodeSource reads the source block in place: no map, no union wrappers,
// and no strings except a changed table name or an unusual snapshot marker.
// It returns the rest of b, a content error (malformed LSN or serial), and
// a structural error.
func (p *envPlan) decodeSource(b []byte, ch *Change) (rest []byte, contentErr, err error) {
	var db, schema, table, pgSeq, file []byte
	var pgLSN, pos, row int64
	keep := func(e error) {
		if contentErr == nil {
			contentErr = e
		}
	}
	for i := range p.src {
		f := &p.src[i]
		if f.target == srcNone {
			if b, err = f.skip(b); err != nil {
				return nil, nil, err
			}
			continue
		}
		if f.nullIdx >= 0 {
			var idx int64
			if idx, b, err = readLong(b); err != nil {
				return nil, nil, err
			}
			if idx != 0 && idx != 1 {
				return nil, nil, fmt.Errorf("union index %d of 2", idx)
			}
			if int(idx) == f.nullIdx {
				continue
			}
		}
		if f.long {
			var n int64
			if n, b, err = readLong(b); err != nil {
				return nil, nil, err
			}
			switch f.target {
			case srcTsMs:
				ch.CommitMillis = n
			case srcSerial:
				ch.Pos.Serial = n
			case srcPgLSN:
				pgLSN = n
			case srcPos:
				pos = n
			case srcRow:
				row = n
			}
			continue
		}
		var s []byte
		if s, b, err = readBytes(b); err != nil {
			return nil, nil, err
		}
		switch f.target {
		case srcDB:
			db = s
		case srcSchema:
			schema = s
		case srcTable:
			table = s
		case srcSnapshot:
			ch.Snapshot = snapshotMarker(s)
		case srcChangeLSN:
			lsn, perr := parseLSN(s)
			if perr != nil {
				keep(fmt.Errorf("change_lsn: %w", perr))
			}
			ch.Pos.Change = lsn
		case srcCommitLSN:
			lsn, perr := parseLSN(s)
			if perr != nil {
				keep(fmt.Errorf("commit_lsn: %w", perr))
			}
			ch.Pos.Commit = lsn
		case srcSerial: // documentation examples (and Debezium 1.x) show a string
			n, perr := strconv.ParseInt(string(s), 10, 64)
			if perr != nil {
				keep(fmt.Errorf("%w: event_serial_no %q", ErrBadEnvelope, s))
			}
			ch.Pos.Serial = n
		case srcPgSequence:
			pgSeq = s
		case srcFile:
			file = s
		}
	}
	var perr error
	switch p.order {
	case SourcePostgres:
		ch.Pos, perr = postgresPosition(pgLSN, pgSeq, ch.Snapshot != "")
	case SourceMySQL:
		ch.Pos, perr = mysqlPosition(file, pos, row, ch.Snapshot != "")
	}
	if perr != nil {
		keep(perr)
	}
	if ch.Pos.Serial < 0 {
		keep(fmt.Errorf("%w: negative event_serial_no %d", ErrBadEnvelope, ch.Pos.Serial))
	}
	ch.Table = p.intern(db, schema, table)
	return b, contentErr, nil
}

func (p *envPlan) intern(db, schema, table []byte) TableID {
	if t := p.table.Load(); t != nil && string(db) == t.Database && string(schema) == t.Schema && string(table) == t.Table {
		return *t
	}
	t := &TableID{Database: string(db), Schema: string(schema), Table: string(table)}
	p.table.Store(t)
	return *t
}

func snapshotMarker(s []byte) string {
	switch string(s) {
	case "false":
		return ""
	case "true":
		return "true"
	case "first":
		return "first"
	case "first_in_data_collection":
		return "first_in_data_collection"
	case "last_in_data_collection":
		return "last_in_data_collection"
	case "last":
		return "last"
	case "incremental":
		return "incremental"
	}
	return string(s)
}
