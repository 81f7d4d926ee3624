package codecs

import (
	"fmt"
	"sync/atomic"

	"github.com/linkedin/goavro/v2"
)

// envPlan decodes a Debezium envelope field by field in writer order
// instead of materializing it whole with goavro. The row image the op needs
// goes through its row decoder (ADR 0033), or goavro for shapes that has
// none; the transaction block, when present, through goavro. The framework
// scalars (op and the source block) are read in place, and the other image
// and the ts_* fields are skipped (ADR 0004). Schemas the plan does not
// understand fall back to whole-envelope goavro decoding.
type envPlan struct {
	steps []envStep
	src   []srcField
	order Source // the family whose order key the source block carries
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
	// row decodes a before or after image without goavro; nil when its
	// shape is not covered (codec then decodes it).
	row *rowDecoder
}

// buildPlan compiles the plan of an envelope record whose logical types are
// already stripped; l is the layout of its row images. rowErr says why an
// image is left to goavro.
func buildPlan(env map[string]any, names map[string]map[string]any, l *Layout) (p *envPlan, rowErr, err error) {
	ns := namespaceOf(env)
	sb := &skipBuilder{names: names, named: map[string]*skipFn{}}
	p = &envPlan{}
	fields, _ := env["fields"].([]any)
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		name, _ := fm["name"].(string)
		skip, err := sb.build(fm["type"], ns)
		if err != nil {
			return nil, nil, fmt.Errorf("field %s: %w", name, err)
		}
		st := envStep{skip: skip}
		switch name {
		case "before", "after", "transaction":
			st.kind = map[string]stepKind{"before": stepBefore, "after": stepAfter, "transaction": stepTx}[name]
			if st.codec, err = standaloneCodec(fm["type"], ns, names); err != nil {
				return nil, nil, fmt.Errorf("field %s: %w", name, err)
			}
			if name != "transaction" {
				var rerr error
				if st.row, rerr = newRowDecoder(fm["type"], ns, names, l); rerr != nil {
					rowErr = fmt.Errorf("field %s: %w", name, rerr)
				}
			}
		case "op":
			if fm["type"] != "string" {
				return nil, nil, fmt.Errorf("op is %v, not a string", fm["type"])
			}
			st.kind = stepOp
		case "source":
			st.kind = stepSource
			if p.src, p.order, err = buildSource(fm["type"], ns, names, sb); err != nil {
				return nil, nil, err
			}
		}
		p.steps = append(p.steps, st)
	}
	return p, rowErr, nil
}

// decode fills ch from an envelope body but for its row: it returns the
// bytes of the row image the op needs and the step that decodes it (nil
// for truncates).
func (p *envPlan) decode(body []byte, ch *Change) ([]byte, *envStep, error) {
	var before, after, tx, op []byte
	var beforeS, afterS *envStep
	var txC *goavro.Codec
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
			return nil, nil, fmt.Errorf("%w: %v", ErrBadBody, err)
		}
		window := start[:len(start)-len(b)]
		switch s.kind {
		case stepBefore:
			before, beforeS = window, s
		case stepAfter:
			after, afterS = window, s
		case stepTx:
			tx, txC = window, s.codec
		}
	}
	if len(b) != 0 {
		return nil, nil, fmt.Errorf("%w: %d trailing bytes", ErrBadBody, len(b))
	}
	if len(op) != 1 {
		return nil, nil, &OpError{Op: string(op)}
	}
	ch.Op = Op(op[0])
	image, step := after, afterS
	switch ch.Op {
	case OpCreate, OpRead, OpUpdate:
	case OpDelete:
		image, step = before, beforeS
	case OpTruncate:
		step = nil
	default:
		return nil, nil, &OpError{Op: string(op)}
	}
	if contentErr != nil {
		return nil, nil, contentErr
	}
	// A one-byte window is the null branch: skip goavro for the common case.
	// Completeness places SQL Server's and PostgreSQL's transactions among
	// positions (ADR 0044); MySQL's blocks are not read.
	if txC != nil && len(tx) > 1 && p.order != SourceMySQL {
		v, _, err := txC.NativeFromBinary(tx)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: transaction: %v", ErrBadBody, err)
		}
		if m, ok := unwrap(v).(map[string]any); ok {
			ch.TxID, ch.TxOrder = txBlock(m, p.order)
		}
	}
	return image, step, nil
}

// imageErr wraps a row decoder's error on an image of op.
func imageErr(err error, op Op) error {
	if err == errNullImage {
		return fmt.Errorf("%w: op %s without its row image", ErrBadEnvelope, op)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadBody, err)
	}
	return nil
}

// decodeImage has goavro decode the row image of step into vals, as
// natives for convertRow: for a step without a rowDecoder, or every step
// under d.goavroRows (decodeEnvelope takes the rowDecoder's path).
func (d *Decoder) decodeImage(l *Layout, step *envStep, image []byte, vals []any, op Op) error {
	native, _, err := step.codec.NativeFromBinary(image)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadBody, err)
	}
	row, ok := unwrap(native).(map[string]any)
	if !ok {
		return fmt.Errorf("%w: op %s without its row image", ErrBadEnvelope, op)
	}
	nativesFromMap(l, row, vals)
	return nil
}
