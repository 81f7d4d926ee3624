package codecs

import (
	"fmt"
	"strconv"
)

// decodeWhole materializes the whole envelope with goavro and returns the
// row image the op needs (nil for truncates).
func (d *Decoder) decodeWhole(vc *compiled, body []byte, ch *Change) (map[string]any, error) {
	native, rest, err := vc.codec.NativeFromBinary(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadBody, err)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrBadBody, len(rest))
	}
	env, ok := native.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: envelope is %T", ErrBadBody, native)
	}
	op, _ := env["op"].(string)
	if len(op) != 1 {
		return nil, &OpError{Op: op}
	}
	ch.Op = Op(op[0])
	imageField := "after"
	switch ch.Op {
	case OpCreate, OpRead, OpUpdate:
	case OpDelete:
		imageField = "before"
	case OpTruncate:
		imageField = ""
	default:
		return nil, &OpError{Op: op}
	}
	if err := d.decodeSource(env, ch); err != nil {
		return nil, err
	}
	if tx, ok := unwrap(env["transaction"]).(map[string]any); ok {
		ch.TxID, ch.TxOrder = txBlock(tx, ch.Pos.Source())
	}
	if imageField == "" {
		return nil, nil
	}
	row, ok := unwrap(env[imageField]).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: op %s without its row image", ErrBadEnvelope, op)
	}
	return row, nil
}

func (d *Decoder) decodeSource(env map[string]any, ch *Change) error {
	src, ok := env["source"].(map[string]any)
	if !ok {
		return fmt.Errorf("%w: no source block", ErrBadEnvelope)
	}
	ch.Table.Database, _ = unwrap(src["db"]).(string)
	ch.Table.Schema, _ = unwrap(src["schema"]).(string)
	ch.Table.Table, _ = unwrap(src["table"]).(string)
	ch.CommitMillis, _ = unwrap(src["ts_ms"]).(int64)
	if s, _ := unwrap(src["snapshot"]).(string); s != "false" {
		ch.Snapshot = s
	}
	var err error
	if _, ok := src["lsn"]; ok {
		lsn, _ := unwrap(src["lsn"]).(int64)
		seq, ok := unwrap(src["sequence"]).(string)
		if !ok {
			return fmt.Errorf("%w: postgres source without sequence: lsn alone does not order transactions", ErrBadEnvelope)
		}
		ch.Pos, err = PostgresPosition(lsn, seq, ch.Snapshot != "")
		return err
	}
	if file, ok := unwrap(src["file"]).(string); ok {
		pos, _ := unwrap(src["pos"]).(int64)
		row, ok := asInt64(unwrap(src["row"]))
		if !ok {
			return fmt.Errorf("%w: mysql source without row", ErrBadEnvelope)
		}
		ch.Pos, err = MySQLPosition(file, pos, row, ch.Snapshot != "")
		return err
	}
	if s, ok := unwrap(src["commit_lsn"]).(string); ok {
		if ch.Pos.Commit, err = ParseLSN(s); err != nil {
			return fmt.Errorf("commit_lsn: %w", err)
		}
	}
	if s, ok := unwrap(src["change_lsn"]).(string); ok {
		if ch.Pos.Change, err = ParseLSN(s); err != nil {
			return fmt.Errorf("change_lsn: %w", err)
		}
	}
	switch n := unwrap(src["event_serial_no"]).(type) {
	case int64:
		ch.Pos.Serial = n
	case string: // documentation examples (and Debezium 1.x) show a string
		if ch.Pos.Serial, err = strconv.ParseInt(n, 10, 64); err != nil {
			return fmt.Errorf("%w: event_serial_no %q", ErrBadEnvelope, n)
		}
	}
	if ch.Pos.Serial < 0 {
		return fmt.Errorf("%w: negative event_serial_no %d", ErrBadEnvelope, ch.Pos.Serial)
	}
	return nil
}

// asInt64 reads an Avro int or long as goavro returns it.
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}
