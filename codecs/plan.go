package codecs

import (
	"fmt"
	"sync/atomic"

	"github.com/linkedin/goavro/v2"
)

// envPlan decodes a Debezium envelope field by field in writer order
// instead of materializing it whole with goavro. The row image the op needs
// (and the transaction block, when present) still goes through goavro; the
// framework scalars (op and the source block) are read in place, and the
// other image and the ts_* fields are skipped. This halves the allocations
// of an update: see ADR 0004. Schemas the plan does not understand fall
// back to whole-envelope goavro decoding.
type envPlan struct {
	steps []envStep
	src   []srcField
	// table interns the source db/schema/table strings, which repeat on
	// every event of a schema id.
	table atomic.Pointer[TableID]
}

type stepKind uint8

const (
	stepSkip stepKind = iota
	stepBefore
	stepAfter
	stepSource
	stepTx
	stepOp
)

type envStep struct {
	kind  stepKind
	skip  skipFn
	codec *goavro.Codec // before, after, transaction
}

// buildPlan compiles the plan of an envelope record whose logical types are
// already stripped.
func buildPlan(env map[string]any, names map[string]map[string]any) (*envPlan, error) {
	ns := namespaceOf(env)
	sb := &skipBuilder{names: names, named: map[string]*skipFn{}}
	p := &envPlan{}
	fields, _ := env["fields"].([]any)
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		name, _ := fm["name"].(string)
		skip, err := sb.build(fm["type"], ns)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		st := envStep{skip: skip}
		switch name {
		case "before", "after", "transaction":
			st.kind = map[string]stepKind{"before": stepBefore, "after": stepAfter, "transaction": stepTx}[name]
			if st.codec, err = standaloneCodec(fm["type"], ns, names); err != nil {
				return nil, fmt.Errorf("field %s: %w", name, err)
			}
		case "op":
			if fm["type"] != "string" {
				return nil, fmt.Errorf("op is %v, not a string", fm["type"])
			}
			st.kind = stepOp
		case "source":
			st.kind = stepSource
			if p.src, err = buildSource(fm["type"], ns, names, sb); err != nil {
				return nil, err
			}
		}
		p.steps = append(p.steps, st)
	}
	return p, nil
}

// decode fills ch from an envelope body; it returns the row image record
// (nil for truncates).
func (p *envPlan) decode(body []byte, ch *Change) (map[string]any, error) {
	var before, after, tx, op []byte
	var beforeC, afterC, txC *goavro.Codec
	// Content errors (a malformed LSN) are reported only once the whole
	// body proved well-formed, the order goavro's full decode implies.
	var contentErr error
	b := body
	var err error
	for i := range p.steps {
		s := &p.steps[i]
		start := b
		switch s.kind {
		case stepSource:
			var cerr error
			b, cerr, err = p.decodeSource(b, ch)
			if contentErr == nil {
				contentErr = cerr
			}
		case stepOp:
			op, b, err = readBytes(b)
		default:
			b, err = s.skip(b)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadBody, err)
		}
		window := start[:len(start)-len(b)]
		switch s.kind {
		case stepBefore:
			before, beforeC = window, s.codec
		case stepAfter:
			after, afterC = window, s.codec
		case stepTx:
			tx, txC = window, s.codec
		}
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrBadBody, len(b))
	}
	if len(op) != 1 {
		return nil, &OpError{Op: string(op)}
	}
	ch.Op = Op(op[0])
	image, codec := after, afterC
	switch ch.Op {
	case OpCreate, OpRead, OpUpdate:
	case OpDelete:
		image, codec = before, beforeC
	case OpTruncate:
		codec = nil
	default:
		return nil, &OpError{Op: string(op)}
	}
	if contentErr != nil {
		return nil, contentErr
	}
	// A one-byte window is the null branch: skip goavro for the common case.
	if txC != nil && len(tx) > 1 {
		v, _, err := txC.NativeFromBinary(tx)
		if err != nil {
			return nil, fmt.Errorf("%w: transaction: %v", ErrBadBody, err)
		}
		if m, ok := unwrap(v).(map[string]any); ok {
			ch.TxID, _ = m["id"].(string)
			ch.TxOrder, _ = m["data_collection_order"].(int64)
		}
	}
	if codec == nil {
		return nil, nil
	}
	native, _, err := codec.NativeFromBinary(image)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadBody, err)
	}
	row, ok := unwrap(native).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: op %s without its row image", ErrBadEnvelope, op)
	}
	return row, nil
}
