package sqlexpr

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/cdc2delta/cdc2delta/deltalog/deltatext"
)

// FileStats is what the log says of one data file, for [Predicate.MayMatch]. Maps are
// keyed by schema field index; a missing entry is unknown.
type FileStats struct {
	// NumRecords counts the file's physical rows; -1 when unknown.
	NumRecords int64
	// Partition holds the partition columns' values in the datafile package's
	// conventions (nil for null).
	Partition map[int]any
	// Min and Max are add.stats minValues and maxValues as decoded JSON (json.Number
	// or string).
	Min, Max map[int]any
	// NullCount is add.stats nullCount.
	NullCount map[int]int64
}

// MayMatch reports whether some row of the file can satisfy the predicate: false only
// when the partition values or the statistics rule every row out. Deleted rows
// (deletion vectors) and loose bounds only make it answer true more often.
func (p *Predicate) MayMatch(fs FileStats) bool {
	return mayMatch(p.e, &fs, false)
}

// mayMatch reports whether e (negated when neg) can be TRUE for a row of the file.
func mayMatch(e *expr, fs *FileStats, neg bool) bool {
	switch e.op {
	case opConst:
		if e.val == nil {
			return false
		}
		return e.val.(bool) != neg
	case opNot:
		return mayMatch(e.args[0], fs, !neg)
	case opAnd, opOr:
		l, r := mayMatch(e.args[0], fs, neg), mayMatch(e.args[1], fs, neg)
		if (e.op == opAnd) != neg { // AND, or NOT(a OR b) = NOT a AND NOT b
			return l && r
		}
		return l || r
	case opIsNull:
		c, ok := columnOf(e.args[0])
		if !ok {
			return true
		}
		nulls, all, known := fs.nulls(c)
		if !known {
			return true
		}
		if wantNull := !e.not != neg; wantNull {
			return nulls
		}
		return !all
	case opCmp:
		op := e.name
		if op == "<=>" {
			return true
		}
		if neg {
			op = map[string]string{"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]
		}
		return cmpMayMatch(e.args[0], e.args[1], op, fs)
	case opIn:
		if neg {
			return true
		}
		for _, item := range e.args[1:] {
			if item.op != opConst {
				return true
			}
			if item.val != nil && cmpMayMatch(e.args[0], item, "=", fs) {
				return true
			}
		}
		return false
	}
	return true
}

// columnOf returns the column under monotonic casts (a widening of numbers, a date to
// a timestamp), which keep the order of values and so their bounds.
func columnOf(x *expr) (*expr, bool) {
	for x.op == opCast {
		from, to := x.args[0].typ, x.typ
		monotonic := from.numeric() && to.numeric() && !(from.fractional() && !to.fractional()) && !(from.Kind == KDecimal && to.integral()) ||
			from.datetime() && to.datetime() && !(to.Kind == KDate && from.Kind != KDate)
		if !monotonic {
			return nil, false
		}
		x = x.args[0]
	}
	return x, x.op == opCol
}

func cmpMayMatch(l, r *expr, op string, fs *FileStats) bool {
	if l.op == opConst && r.op != opConst {
		l, r = r, l
		op = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
	}
	if r.op != opConst {
		return true
	}
	if r.val == nil {
		return false // a comparison with NULL is never TRUE
	}
	c, ok := columnOf(l)
	if !ok {
		return true
	}
	lo, hi, known, allNull := fs.bounds(c)
	if allNull {
		return false // every value is null: no comparison is TRUE
	}
	if !known {
		return true
	}
	// Bring the bounds to the comparison's type through the casts above the column.
	conv := func(v any) (any, bool) {
		if v == nil {
			return nil, true
		}
		for _, cast := range castChain(l) {
			var err error
			if v, err = castValue(v, cast.args[0].typ, cast.typ); err != nil {
				return nil, false
			}
		}
		return v, true
	}
	if lo, ok = conv(lo); !ok {
		return true
	}
	if hi, ok = conv(hi); !ok {
		return true
	}
	t, v := l.typ, r.val
	switch op {
	case "=":
		return (lo == nil || compare(t, lo, v) <= 0) && (hi == nil || compare(t, v, hi) <= 0)
	case "<>":
		return lo == nil || hi == nil || compare(t, lo, v) != 0 || compare(t, hi, v) != 0
	case "<":
		return lo == nil || compare(t, lo, v) < 0
	case "<=":
		return lo == nil || compare(t, lo, v) <= 0
	case ">":
		return hi == nil || compare(t, hi, v) > 0
	}
	return hi == nil || compare(t, hi, v) >= 0
}

// castChain lists the casts from the column up to x, innermost first.
func castChain(x *expr) []*expr {
	var out []*expr
	for x.op == opCast {
		out = append([]*expr{x}, out...)
		x = x.args[0]
	}
	return out
}

// nulls says whether the column may hold a null (nulls) and whether it holds nothing
// else (all), when the file says.
func (fs *FileStats) nulls(c *expr) (nulls, all, known bool) {
	if v, ok := fs.Partition[c.col]; ok {
		return v == nil, v == nil, true
	}
	n, ok := fs.NullCount[c.col]
	if !ok || fs.NumRecords < 0 {
		return false, false, false
	}
	return n > 0, n >= fs.NumRecords, true
}

// bounds returns the column's smallest and largest non-null values in evaluation
// form (a nil bound is unknown), whether any bound is known, and whether every value
// is null.
func (fs *FileStats) bounds(c *expr) (lo, hi any, known, allNull bool) {
	if v, isPart := fs.Partition[c.col]; isPart {
		if v == nil {
			return nil, nil, false, true
		}
		x, err := fromRow(c.typ, v)
		if err != nil {
			return nil, nil, false, false
		}
		return x, x, true, false
	}
	if _, all, ok := fs.nulls(c); ok && all {
		return nil, nil, false, true
	}
	lo = statValue(c.typ, fs.Min[c.col], false)
	hi = statValue(c.typ, fs.Max[c.col], true)
	return lo, hi, lo != nil || hi != nil, false
}

// statValue decodes a min or max statistic of type t; nil when absent or not usable
// as a bound.
func statValue(t Type, raw any, upper bool) any {
	if raw == nil {
		return nil
	}
	text := fmt.Sprint(raw)
	switch {
	case t.integral():
		n, ok := raw.(json.Number)
		if !ok {
			return nil
		}
		v, err := n.Int64()
		if err != nil {
			return nil
		}
		return v
	case t.Kind == KDecimal:
		r, ok := parseDecimalText(text)
		if !ok {
			return nil
		}
		num := new(big.Int).Mul(r.Num(), pow10(t.S))
		q, rem := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
		if rem.Sign() != 0 {
			return nil
		}
		return q
	case t.Kind == KString:
		s, ok := raw.(string)
		if !ok {
			return nil
		}
		if upper && utf8.RuneCountInString(s) >= 32 && !strings.HasSuffix(s, "\U0010FFFF") {
			return nil // maybe truncated by a writer that did not keep it an upper bound
		}
		return s
	case t.Kind == KDate:
		d, ok := parseDate(text)
		if !ok {
			return nil
		}
		return d
	case t.Kind == KTimestamp, t.Kind == KTimestampNTZ:
		ts, err := deltatext.ParseStatsTimestamp(text, t.Kind == KTimestampNTZ)
		if err != nil {
			return nil
		}
		us := ts.UnixMicro()
		if upper {
			us += 999 // statistics keep milliseconds: the true maximum may be up to 999µs above
		}
		return us
	}
	return nil // booleans, floats (NaN), binaries: not used
}
