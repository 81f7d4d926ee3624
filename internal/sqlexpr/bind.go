package sqlexpr

import (
	"encoding/hex"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

type opKind uint8

const (
	opConst opKind = iota
	opCol
	opCast
	opNeg
	opArith // name: + - * / %
	opConcat
	opCmp // name: = <> < <= > >= <=>
	opAnd
	opOr
	opNot
	opIsNull // not: IS NOT NULL
	opIsBool // val: true or false; not: IS NOT
	opIn     // args[0] IN args[1:]
	opLike
	opCase // args: cond, then, ...; with else last when hasElse
	opCoalesce
	opFunc // name: LOWER UPPER TRIM LENGTH ABS
)

// expr is a bound, typed expression node.
type expr struct {
	op      opKind
	typ     Type
	pos     int
	args    []*expr
	name    string // operator or function
	col     int    // opCol: schema field index
	val     any    // opConst's value; opIsBool's truth value
	not     bool
	hasElse bool
	like    *likePattern // opLike with a constant pattern
	fold    bool         // opLike: ILIKE
	escape  rune         // opLike
	// lit is the literal a constant came from, for literal typing rules.
	lit *Lit
}

type binder struct {
	schema *deltalog.StructType
	types  []Type
	cols   map[int]bool
}

func newBinder(schema *deltalog.StructType) *binder {
	b := &binder{schema: schema, cols: map[int]bool{}}
	for _, f := range schema.Fields {
		b.types = append(b.types, fromDelta(f.Type))
	}
	return b
}

// resolve finds a column without regard to case, as Spark does by default.
func (b *binder) resolve(name string, pos int) (int, error) {
	found := -1
	for i, f := range b.schema.Fields {
		if f.Name == name {
			return i, nil
		}
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return 0, &Error{Kind: ErrColumn, Pos: pos, Column: name, Msg: "column `" + name + "` is ambiguous: the table has " + QuoteName(b.schema.Fields[found].Name) + " and " + QuoteName(f.Name)}
			}
			found = i
		}
	}
	if found < 0 {
		return 0, &Error{Kind: ErrColumn, Pos: pos, Column: name, Msg: "column " + QuoteName(name) + " does not exist; the table has " + b.columnList()}
	}
	return found, nil
}

func (b *binder) columnList() string {
	names := make([]string, 0, len(b.schema.Fields))
	for _, f := range b.schema.Fields {
		names = append(names, QuoteName(f.Name))
	}
	if len(names) > 12 {
		names = append(names[:12], "...")
	}
	return strings.Join(names, ", ")
}

func typeErr(pos int, t Type, format string, args ...any) *Error {
	e := errAt(ErrType, pos, format, args...)
	e.Type = t.String()
	return e
}

// describeNode names an operand for messages: a column by name, else its type.
func describeNode(n Node, t Type) string {
	if c, ok := n.(*Col); ok {
		return t.String() + " column " + QuoteName(c.Name)
	}
	return t.String() + " " + n.SQL()
}

func constant(t Type, v any, pos int) *expr { return &expr{op: opConst, typ: t, val: v, pos: pos} }

func (b *binder) bind(n Node) (*expr, error) {
	switch n := n.(type) {
	case *Lit:
		return bindLit(n)
	case *Col:
		i, err := b.resolve(n.Name, n.At)
		if err != nil {
			return nil, err
		}
		b.cols[i] = true
		return &expr{op: opCol, typ: b.types[i], col: i, pos: n.At, name: b.schema.Fields[i].Name}, nil
	case *Unary:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		if n.Op == "NOT" {
			if x, err = b.boolean(x, n.X, "NOT"); err != nil {
				return nil, err
			}
			return fold(&expr{op: opNot, typ: tBool, pos: n.At, args: []*expr{x}}), nil
		}
		if x.typ.Kind == KNull {
			return x, nil
		}
		if isStringLit(x) { // Spark reads -'5' as a DOUBLE
			if x, err = coerceOperand(x, tDouble, n.X); err != nil {
				return nil, err
			}
		}
		if !x.typ.numeric() {
			return nil, typeErr(start(n.X), x.typ, "unary %s needs a number, not %s", n.Op, describeNode(n.X, x.typ))
		}
		if n.Op == "+" {
			return x, nil
		}
		if l, ok := n.X.(*Lit); ok && l.Kind == LitNumber && !strings.HasPrefix(l.Text, "-") {
			// Spark's grammar reads -2147483648 as one INT literal, not -(BIGINT).
			return bindLit(&Lit{At: n.At, Kind: LitNumber, Text: "-" + l.Text})
		}
		// A negative literal keeps its literal typing (-5 is an INT literal of 1 digit).
		e := fold(&expr{op: opNeg, typ: x.typ, pos: n.At, args: []*expr{x}})
		if e.op == opConst {
			e.lit = x.lit
		}
		return e, nil
	case *Binary:
		return b.binary(n)
	case *Between:
		// Spark rewrites BETWEEN to two comparisons.
		lo := &Binary{At: n.At, Op: ">=", L: n.X, R: n.Lo}
		hi := &Binary{At: n.At, Op: "<=", L: n.X, R: n.Hi}
		var r Node = &Binary{At: n.At, Op: "AND", L: lo, R: hi}
		if n.Not {
			r = &Unary{At: n.At, Op: "NOT", X: r}
		}
		return b.bind(r)
	case *In:
		return b.in(n)
	case *Like:
		return b.likeExpr(n)
	case *Is:
		return b.is(n)
	case *Case:
		return b.caseExpr(n)
	case *Cast:
		x, err := b.bind(n.X)
		if err != nil {
			return nil, err
		}
		if err := checkCast(x.typ, n.To, n.X); err != nil {
			return nil, err
		}
		return fold(&expr{op: opCast, typ: n.To, pos: n.At, args: []*expr{x}}), nil
	case *Call:
		return b.call(n)
	}
	return nil, errAt(ErrUnsupported, n.Pos(), "unsupported expression")
}

func bindLit(n *Lit) (*expr, error) {
	e := &expr{op: opConst, pos: n.At, lit: n}
	switch n.Kind {
	case LitNull:
		e.typ = tNull
	case LitBool:
		e.typ, e.val = tBool, n.Text == "TRUE"
	case LitString:
		e.typ, e.val = tString, n.Text
	case LitBinary:
		b, err := hex.DecodeString(n.Text)
		if err != nil {
			if len(n.Text)%2 == 1 {
				// Spark pads an odd number of digits with a leading 0.
				b, err = hex.DecodeString("0" + n.Text)
			}
			if err != nil {
				return nil, errAt(ErrSyntax, n.At, "X'%s' is not hexadecimal", n.Text)
			}
		}
		e.typ, e.val = Type{Kind: KBinary}, b
	case LitDate:
		d, ok := parseDate(n.Text)
		if !ok {
			return nil, typeErr(n.At, Type{Kind: KDate}, "%s is not a date", quote(n.Text))
		}
		e.typ, e.val = Type{Kind: KDate}, d
	case LitTimestamp, LitTimestampNTZ:
		t := Type{Kind: KTimestamp}
		if n.Kind == LitTimestampNTZ {
			t = Type{Kind: KTimestampNTZ}
		}
		us, ok := parseTimestamp(n.Text, n.Kind == LitTimestampNTZ)
		if !ok {
			return nil, typeErr(n.At, t, "%s is not a %s", quote(n.Text), t)
		}
		e.typ, e.val = t, us
	case LitNumber:
		t, v, err := numberLit(n)
		if err != nil {
			return nil, err
		}
		e.typ, e.val = t, v
	}
	return e, nil
}

// numberLit types a number literal as Spark does.
func numberLit(n *Lit) (Type, any, error) {
	text := n.Text
	lower := strings.ToLower(text)
	bad := func(t Type) (Type, any, error) {
		return Type{}, nil, typeErr(n.At, t, "%s does not fit %s", text, t)
	}
	switch {
	case strings.HasSuffix(lower, "bd"):
		r, ok := parseDecimalText(text[:len(text)-2])
		if !ok {
			return Type{}, nil, errAt(ErrSyntax, n.At, "malformed number %s", text)
		}
		return decimalLit(n, text[:len(text)-2], r)
	case strings.HasSuffix(lower, "d"), strings.HasSuffix(lower, "f"):
		f, err := strconv.ParseFloat(text[:len(text)-1], 64)
		t := tDouble
		if strings.HasSuffix(lower, "f") {
			t = Type{Kind: KFloat}
			f = float64(float32(f))
		}
		if err != nil || math.IsInf(f, 0) {
			return bad(t)
		}
		return t, f, nil
	case strings.HasSuffix(lower, "l"), strings.HasSuffix(lower, "s"), strings.HasSuffix(lower, "y"):
		t := map[byte]Type{'l': tLong, 's': {Kind: KShort}, 'y': {Kind: KByte}}[lower[len(lower)-1]]
		v, err := strconv.ParseInt(text[:len(text)-1], 10, 64)
		lo, hi := intRange(t.Kind)
		if err != nil || v < lo || v > hi {
			return bad(t)
		}
		return t, v, nil
	case strings.ContainsAny(lower, "e"):
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return bad(tDouble)
		}
		return tDouble, f, nil
	case strings.Contains(text, "."):
		r, ok := parseDecimalText(text)
		if !ok {
			return Type{}, nil, errAt(ErrSyntax, n.At, "malformed number %s", text)
		}
		return decimalLit(n, text, r)
	}
	v, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return Type{}, nil, errAt(ErrSyntax, n.At, "malformed number %s", text)
	}
	switch {
	case v.IsInt64() && v.Int64() >= math.MinInt32 && v.Int64() <= math.MaxInt32:
		return tInt, v.Int64(), nil
	case v.IsInt64():
		return tLong, v.Int64(), nil
	case digits(v) <= 38:
		return Type{Kind: KDecimal, P: digits(v)}, v, nil
	}
	return bad(Type{Kind: KDecimal, P: 38})
}

// decimalLit types 1.50 as DECIMAL(3,2), as Java's BigDecimal reads it.
func decimalLit(n *Lit, text string, r *big.Rat) (Type, any, error) {
	mant := strings.TrimLeft(text, "+-")
	scale := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		scale = len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	if strings.ContainsAny(mant, "eE") {
		return Type{}, nil, errAt(ErrUnsupported, n.At, "decimal literals with an exponent are not supported: write %s without it", text)
	}
	mant = strings.TrimLeft(mant, "0")
	p := max(len(mant), scale, 1)
	if p > 38 {
		return Type{}, nil, typeErr(n.At, Type{Kind: KDecimal, P: 38, S: min(scale, 38)}, "%s has more than 38 digits", text)
	}
	v, _ := ratToDecimal(r, p, scale)
	return Type{Kind: KDecimal, P: p, S: scale}, v, nil
}

// boolean checks that x is a condition (BOOLEAN or NULL).
func (b *binder) boolean(x *expr, n Node, where string) (*expr, error) {
	switch x.typ.Kind {
	case KBool:
		return x, nil
	case KNull:
		return constant(tBool, nil, x.pos), nil
	}
	return nil, typeErr(start(n), x.typ, "%s needs a condition, not %s", where, describeNode(n, x.typ))
}

func (b *binder) binary(n *Binary) (*expr, error) {
	l, err := b.bind(n.L)
	if err != nil {
		return nil, err
	}
	r, err := b.bind(n.R)
	if err != nil {
		return nil, err
	}
	switch n.Op {
	case "AND", "OR":
		if l, err = b.boolean(l, n.L, n.Op); err != nil {
			return nil, err
		}
		if r, err = b.boolean(r, n.R, n.Op); err != nil {
			return nil, err
		}
		op := opAnd
		if n.Op == "OR" {
			op = opOr
		}
		return fold(&expr{op: op, typ: tBool, pos: n.At, args: []*expr{l, r}}), nil
	case "=", "<>", "<", "<=", ">", ">=", "<=>":
		l, r, err := b.comparable(l, r, n.L, n.R, n.At, n.Op)
		if err != nil {
			return nil, err
		}
		return fold(&expr{op: opCmp, typ: tBool, pos: n.At, name: n.Op, args: []*expr{l, r}}), nil
	case "||":
		l, err := concatOperand(l, n.L)
		if err != nil {
			return nil, err
		}
		r, err := concatOperand(r, n.R)
		if err != nil {
			return nil, err
		}
		return fold(&expr{op: opConcat, typ: tString, pos: n.At, args: []*expr{l, r}}), nil
	case "div":
		return integralDivide(n, l, r)
	}
	return b.arith(n, l, r)
}

// integralDivide binds a div b as Spark's IntegralDivide: integers (as BIGINT) or
// decimals, never FLOAT or DOUBLE; a BIGINT, the quotient truncated toward zero.
func integralDivide(n *Binary, l, r *expr) (*expr, error) {
	for _, side := range []struct {
		x *expr
		n Node
	}{{l, n.L}, {r, n.R}} {
		if t := side.x.typ; t.Kind != KNull && (!t.numeric() || t.fractional()) {
			return nil, typeErr(start(side.n), t, "div needs integers or decimals, not %s", describeNode(side.n, t))
		}
	}
	if l.typ.Kind == KNull || r.typ.Kind == KNull {
		return constant(tLong, nil, n.At), nil
	}
	if l.typ.Kind == KDecimal || r.typ.Kind == KDecimal {
		l, r = castTo(l, decimalOperand(l)), castTo(r, decimalOperand(r))
	} else {
		l, r = castTo(l, tLong), castTo(r, tLong)
	}
	return fold(&expr{op: opArith, typ: tLong, pos: n.At, name: "div", args: []*expr{l, r}}), nil
}

// concatOperand casts an operand of || or CONCAT to a string, as Spark does for the
// types whose text we render the same.
func concatOperand(x *expr, n Node) (*expr, error) {
	switch {
	case x.typ.Kind == KString:
		return x, nil
	case x.typ.Kind == KNull:
		return constant(tString, nil, x.pos), nil
	case x.typ.Kind == KBinary:
		return nil, typeErr(start(n), x.typ, "|| of BINARY values is not supported")
	}
	if err := checkCast(x.typ, tString, n); err != nil {
		return nil, err
	}
	return fold(&expr{op: opCast, typ: tString, pos: x.pos, args: []*expr{x}}), nil
}

func (b *binder) arith(n *Binary, l, r *expr) (*expr, error) {
	// A string literal beside a number takes the type it takes in a comparison:
	// i + '5' is a BIGINT sum, dec + '1.5' a DOUBLE one.
	var err error
	switch {
	case isStringLit(l) && r.typ.numeric():
		l, err = coerceOperand(l, stringPromotion(r.typ, []*expr{l}), n.L)
	case isStringLit(r) && l.typ.numeric():
		r, err = coerceOperand(r, stringPromotion(l.typ, []*expr{r}), n.R)
	}
	if err != nil {
		return nil, err
	}
	for _, side := range []struct {
		x *expr
		n Node
	}{{l, n.L}, {r, n.R}} {
		if side.x.typ.Kind != KNull && !side.x.typ.numeric() {
			hint := ""
			if side.x.typ.datetime() {
				hint = " (date and time arithmetic is not supported)"
			}
			if side.x.typ.Kind == KString {
				hint = " (Spark casts strings in arithmetic by its ANSI rules; CAST it explicitly)"
			}
			return nil, typeErr(start(side.n), side.x.typ, "%s needs numbers, not %s%s", n.Op, describeNode(side.n, side.x.typ), hint)
		}
	}
	if l.typ.Kind == KNull && r.typ.Kind == KNull {
		return constant(tNull, nil, n.At), nil
	}
	if l.typ.Kind == KNull {
		l = constant(r.typ, nil, l.pos)
	}
	if r.typ.Kind == KNull {
		r = constant(l.typ, nil, r.pos)
	}
	var t Type
	lt, rt := l.typ, r.typ
	switch {
	case lt.Kind == KDouble || rt.Kind == KDouble, n.Op == "/" && !(lt.Kind == KDecimal || rt.Kind == KDecimal) || n.Op == "/" && (lt.fractional() || rt.fractional()):
		t = tDouble
	case lt.Kind == KFloat || rt.Kind == KFloat:
		// Spark's ANSI least common type skips FLOAT (it cannot hold every INT or
		// DECIMAL): only FLOAT with FLOAT stays FLOAT, anything else is DOUBLE.
		t = tDouble
		if lt.Kind == KFloat && rt.Kind == KFloat {
			t = Type{Kind: KFloat}
		}
	case lt.Kind == KDecimal || rt.Kind == KDecimal:
		lt, rt = decimalOperand(l), decimalOperand(r)
		p1, s1, p2, s2 := lt.P, lt.S, rt.P, rt.S
		switch n.Op {
		case "+", "-":
			s := max(s1, s2)
			t = boundedDecimal(max(p1-s1, p2-s2)+s+1, s)
		case "*":
			t = boundedDecimal(p1+p2+1, s1+s2)
		case "/":
			s := max(6, s1+p2+1)
			t = boundedDecimal(p1-s1+s2+s, s)
		case "%":
			s := max(s1, s2)
			t = boundedDecimal(min(p1-s1, p2-s2)+s, s)
		}
		l, r = castTo(l, lt), castTo(r, rt)
		e := &expr{op: opArith, typ: t, pos: n.At, name: n.Op, args: []*expr{l, r}}
		return fold(e), nil
	default:
		t = lt
		if rt.Kind > lt.Kind {
			t = rt
		}
	}
	return fold(&expr{op: opArith, typ: t, pos: n.At, name: n.Op, args: []*expr{castTo(l, t), castTo(r, t)}}), nil
}

// decimalOperand is the decimal type an operand of decimal arithmetic takes: its own,
// an integral literal's digits (Spark's literalPickMinimumPrecision), or the type
// that holds every value of its integral type.
func decimalOperand(x *expr) Type {
	if x.typ.Kind == KDecimal {
		return x.typ
	}
	if x.op == opConst && x.lit != nil && x.val != nil {
		return Type{Kind: KDecimal, P: digits(big.NewInt(x.val.(int64)))}
	}
	return integralDecimal(x.typ)
}

// castTo wraps x in an implicit cast to t unless it has that type already.
func castTo(x *expr, t Type) *expr {
	if x.typ == t {
		return x
	}
	return fold(&expr{op: opCast, typ: t, pos: x.pos, args: []*expr{x}})
}

// comparable brings both sides of a comparison (or IN, CASE, COALESCE) to one type.
// A string literal beside a typed operand is read as that type.
func (b *binder) comparable(l, r *expr, ln, rn Node, pos int, op string) (*expr, *expr, error) {
	// Beside a decimal an integral literal is a decimal of its own digits (Spark's
	// literalPickMinimumPrecision), so a DECIMAL(38,30) compares with 0 at scale 30.
	if l.typ.Kind == KDecimal && isIntegralLit(r) {
		r = castTo(r, decimalOperand(r))
	}
	if r.typ.Kind == KDecimal && isIntegralLit(l) {
		l = castTo(l, decimalOperand(l))
	}
	t, err := b.common([]*expr{l, r}, []Node{ln, rn}, pos, op)
	if err != nil {
		return nil, nil, err
	}
	if t.Kind == KOther {
		return nil, nil, typeErr(start(ln), t, "%s cannot compare nested values", op)
	}
	l, err = coerceOperand(l, t, ln)
	if err != nil {
		return nil, nil, err
	}
	r, err = coerceOperand(r, t, rn)
	return l, r, err
}

// coerceOperand converts x to t: a string literal is parsed as a t at bind time.
func coerceOperand(x *expr, t Type, n Node) (*expr, error) {
	if x.typ == t {
		return x, nil
	}
	if x.typ.Kind == KString && x.op == opConst && t.Kind != KString {
		v, err := castValue(x.val, tString, t)
		if err != nil {
			e := typeErr(start(n), t, "%s is not a valid %s", n.SQL(), t)
			return nil, e
		}
		return constant(t, v, x.pos), nil
	}
	return castTo(x, t), nil
}

// isIntegralLit reports whether x is a non-null integral literal.
func isIntegralLit(x *expr) bool {
	return x.op == opConst && x.lit != nil && x.val != nil && x.typ.integral()
}

// isStringLit reports whether x is a string constant (a literal or folded).
func isStringLit(x *expr) bool { return x.op == opConst && x.typ.Kind == KString }

// common finds the type all operands are compared or combined as: the wider type
// of the typed operands; string literals then take it (STRING when nothing else).
func (b *binder) common(xs []*expr, ns []Node, pos int, what string) (Type, error) {
	t := tNull
	var tn Node
	for i, x := range xs {
		if x.typ.Kind == KNull || isStringLit(x) {
			continue
		}
		if t.Kind == KNull {
			t, tn = x.typ, ns[i]
			continue
		}
		w, ok := wider(t, x.typ)
		if !ok {
			return Type{}, mismatch(what, tn, t, ns[i], x.typ)
		}
		t = w
	}
	if t.Kind == KNull {
		for _, x := range xs {
			if isStringLit(x) {
				t = tString
			}
		}
	}
	return stringPromotion(t, xs), nil
}

// stringPromotion is the type Spark's ANSI coercion gives a string beside t: BIGINT
// beside an integral type and DOUBLE beside a decimal or a float (so s = '100000' is
// FALSE for a SMALLINT s, not an overflow, and dec = '12.345' is FALSE for a
// DECIMAL(10,2) dec, not rounded to 12.35), t itself otherwise.
func stringPromotion(t Type, xs []*expr) Type {
	if !t.numeric() || t.Kind == KDouble || t.Kind == KLong {
		return t
	}
	for _, x := range xs {
		if isStringLit(x) {
			if t.integral() {
				return tLong
			}
			return tDouble
		}
	}
	return t
}

func mismatch(what string, ln Node, lt Type, rn Node, rt Type) error {
	hint := ""
	if lt.Kind == KString && rt.numeric() || rt.Kind == KString && lt.numeric() {
		hint = ": Spark casts the string by its ANSI rules; write CAST(... AS " + map[bool]Type{true: rt, false: lt}[lt.Kind == KString].String() + ") or a literal of the column's type"
	}
	e := typeErr(start(rn), rt, "%s: %s does not fit %s%s", what, describeNode(rn, rt), describeNode(ln, lt), hint)
	if c, ok := rn.(*Col); ok {
		e.Column = c.Name
	} else if c, ok := ln.(*Col); ok {
		e.Column = c.Name
	}
	return e
}

// wider is Spark's wider common type of two non-null types, for the pairs we support.
func wider(a, b Type) (Type, bool) {
	switch {
	case a == b:
		return a, true
	case a.Kind == KDecimal && b.Kind == KDecimal:
		return widerDecimal(a, b), true
	case a.numeric() && b.numeric():
		// FLOAT beside any other number is DOUBLE: Spark's ANSI type precedence skips
		// FLOAT for the least common type (16777217 is not a FLOAT).
		if a.Kind == KDouble || b.Kind == KDouble || a.Kind == KFloat || b.Kind == KFloat {
			return tDouble, true
		}
		if a.Kind == KDecimal {
			return widerDecimal(a, integralDecimal(b)), true
		}
		if b.Kind == KDecimal {
			return widerDecimal(integralDecimal(a), b), true
		}
		return Type{Kind: max(a.Kind, b.Kind)}, true
	case a.datetime() && b.datetime():
		if a.Kind == KTimestamp || b.Kind == KTimestamp {
			return Type{Kind: KTimestamp}, true
		}
		return Type{Kind: KTimestampNTZ}, true
	}
	return Type{}, false
}

func (b *binder) in(n *In) (*expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	xs, ns := []*expr{x}, []Node{n.X}
	for _, item := range n.List {
		e, err := b.bind(item)
		if err != nil {
			return nil, err
		}
		xs, ns = append(xs, e), append(ns, item)
	}
	t, err := b.common(xs, ns, n.At, "IN")
	if err != nil {
		return nil, err
	}
	if t.Kind == KOther {
		return nil, typeErr(start(n.X), t, "IN cannot compare nested values")
	}
	for i := range xs {
		if xs[i], err = coerceOperand(xs[i], t, ns[i]); err != nil {
			return nil, err
		}
	}
	e := fold(&expr{op: opIn, typ: tBool, pos: n.At, args: xs})
	if n.Not {
		e = fold(&expr{op: opNot, typ: tBool, pos: n.At, args: []*expr{e}})
	}
	return e, nil
}

func (b *binder) likeExpr(n *Like) (*expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	p, err := b.bind(n.Pattern)
	if err != nil {
		return nil, err
	}
	for _, side := range []struct {
		x *expr
		n Node
	}{{x, n.X}, {p, n.Pattern}} {
		if side.x.typ.Kind != KString && side.x.typ.Kind != KNull {
			return nil, typeErr(start(side.n), side.x.typ, "LIKE needs strings, not %s", describeNode(side.n, side.x.typ))
		}
	}
	esc := '\\'
	if n.Escape != nil {
		r, size := utf8.DecodeRuneInString(n.Escape.Text)
		if size == 0 || size != len(n.Escape.Text) {
			return nil, errAt(ErrSyntax, n.Escape.At, "the ESCAPE string must be one character")
		}
		esc = r
	}
	e := &expr{op: opLike, typ: tBool, pos: n.At, args: []*expr{x, p}, escape: esc, fold: n.Fold}
	if p.op == opConst {
		if p.val == nil {
			return constant(tBool, nil, n.At), nil
		}
		lp, err := compileLike(p.val.(string), esc, n.Fold)
		if err != nil {
			err.Pos = start(n.Pattern)
			return nil, err
		}
		e.like = lp
	}
	r := fold(e)
	if n.Not {
		r = fold(&expr{op: opNot, typ: tBool, pos: n.At, args: []*expr{r}})
	}
	return r, nil
}

func (b *binder) is(n *Is) (*expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	switch n.What {
	case "NULL":
		return fold(&expr{op: opIsNull, typ: tBool, pos: n.At, args: []*expr{x}, not: n.Not}), nil
	case "UNKNOWN":
		if x, err = b.boolean(x, n.X, "IS UNKNOWN"); err != nil {
			return nil, err
		}
		return fold(&expr{op: opIsNull, typ: tBool, pos: n.At, args: []*expr{x}, not: n.Not}), nil
	case "TRUE", "FALSE":
		if x, err = b.boolean(x, n.X, "IS "+n.What); err != nil {
			return nil, err
		}
		return fold(&expr{op: opIsBool, typ: tBool, pos: n.At, args: []*expr{x}, val: n.What == "TRUE", not: n.Not}), nil
	}
	y, err := b.bind(n.Y)
	if err != nil {
		return nil, err
	}
	l, r, err := b.comparable(x, y, n.X, n.Y, n.At, "IS DISTINCT FROM")
	if err != nil {
		return nil, err
	}
	e := fold(&expr{op: opCmp, typ: tBool, pos: n.At, name: "<=>", args: []*expr{l, r}})
	if !n.Not {
		e = fold(&expr{op: opNot, typ: tBool, pos: n.At, args: []*expr{e}})
	}
	return e, nil
}

func (b *binder) caseExpr(n *Case) (*expr, error) {
	var operand *expr
	if n.Operand != nil {
		var err error
		if operand, err = b.bind(n.Operand); err != nil {
			return nil, err
		}
	}
	var conds, vals []*expr
	var valNodes []Node
	for _, w := range n.Whens {
		c, err := b.bind(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			l, r, err := b.comparable(operand, c, n.Operand, w.Cond, w.Cond.Pos(), "CASE")
			if err != nil {
				return nil, err
			}
			c = fold(&expr{op: opCmp, typ: tBool, pos: w.Cond.Pos(), name: "=", args: []*expr{l, r}})
		} else if c, err = b.boolean(c, w.Cond, "WHEN"); err != nil {
			return nil, err
		}
		v, err := b.bind(w.Then)
		if err != nil {
			return nil, err
		}
		conds, vals, valNodes = append(conds, c), append(vals, v), append(valNodes, w.Then)
	}
	if n.Else != nil {
		v, err := b.bind(n.Else)
		if err != nil {
			return nil, err
		}
		vals, valNodes = append(vals, v), append(valNodes, n.Else)
	}
	t, err := b.resultType(vals, valNodes, n.At, "CASE")
	if err != nil {
		return nil, err
	}
	e := &expr{op: opCase, typ: t, pos: n.At, hasElse: n.Else != nil}
	for i := range vals {
		v, err := coerceOperand(vals[i], t, valNodes[i])
		if err != nil {
			return nil, err
		}
		if i < len(conds) {
			e.args = append(e.args, conds[i])
		}
		e.args = append(e.args, v)
	}
	return fold(e), nil
}

// resultType is the type of a CASE or COALESCE: the operands' common type, STRING when
// all are strings, NULL when all are NULL.
func (b *binder) resultType(xs []*expr, ns []Node, pos int, what string) (Type, error) {
	t, err := b.common(xs, ns, pos, what)
	if err != nil {
		return Type{}, err
	}
	return t, nil
}

func (b *binder) call(n *Call) (*expr, error) {
	args := make([]*expr, len(n.Args))
	for i, a := range n.Args {
		x, err := b.bind(a)
		if err != nil {
			return nil, err
		}
		args[i] = x
	}
	arity := func(lo, hi int) error {
		if len(args) < lo || hi >= 0 && len(args) > hi {
			want := strconv.Itoa(lo)
			if hi != lo {
				want = "at least " + want
				if hi > 0 {
					want = strconv.Itoa(lo) + " to " + strconv.Itoa(hi)
				}
			}
			return errAt(ErrType, n.At, "%s takes %s arguments, not %d", n.Name, want, len(args))
		}
		return nil
	}
	switch n.Name {
	case "COALESCE", "IFNULL", "NVL", "NULLIF":
		switch n.Name {
		case "COALESCE":
			if err := arity(1, -1); err != nil {
				return nil, err
			}
		default:
			if err := arity(2, 2); err != nil {
				return nil, err
			}
		}
		t, err := b.resultType(args, n.Args, n.At, n.Name)
		if err != nil {
			return nil, err
		}
		first := args[0]
		for i := range args {
			if args[i], err = coerceOperand(args[i], t, n.Args[i]); err != nil {
				return nil, err
			}
		}
		if n.Name == "NULLIF" {
			// NULLIF(a, b) is CASE WHEN a = b THEN NULL ELSE a END.
			if t.Kind == KOther {
				return nil, typeErr(n.At, t, "NULLIF cannot compare nested values")
			}
			// The result keeps a's own type (Spark builds the IF before coercing the
			// comparison): NULLIF(i, 5.5) is an INT, compared as a decimal.
			eq := fold(&expr{op: opCmp, typ: tBool, pos: n.At, name: "=", args: args})
			if first.typ.Kind != KNull {
				t = first.typ
			} else {
				first = args[0]
			}
			return fold(&expr{op: opCase, typ: t, pos: n.At, hasElse: true, args: []*expr{eq, constant(t, nil, n.At), first}}), nil
		}
		return fold(&expr{op: opCoalesce, typ: t, pos: n.At, args: args}), nil
	case "CONCAT":
		e := constant(tString, "", n.At) // Spark's concat() is ''
		if len(args) > 0 {
			e = nil
		}
		for i, a := range args {
			x, err := concatOperand(a, n.Args[i])
			if err != nil {
				return nil, err
			}
			if e == nil {
				e = x
			} else {
				e = fold(&expr{op: opConcat, typ: tString, pos: n.At, args: []*expr{e, x}})
			}
		}
		return e, nil
	case "LOWER", "LCASE", "UPPER", "UCASE", "TRIM", "LTRIM", "RTRIM", "LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		x, err := concatOperand(args[0], n.Args[0])
		if err != nil {
			return nil, err
		}
		name := map[string]string{"LCASE": "LOWER", "UCASE": "UPPER", "CHAR_LENGTH": "LENGTH", "CHARACTER_LENGTH": "LENGTH"}[n.Name]
		if name == "" {
			name = n.Name
		}
		t := tString
		if name == "LENGTH" {
			t = tInt
		}
		return fold(&expr{op: opFunc, typ: t, pos: n.At, name: name, args: []*expr{x}}), nil
	case "ABS":
		if err := arity(1, 1); err != nil {
			return nil, err
		}
		x := args[0]
		if x.typ.Kind == KNull {
			return x, nil
		}
		if isStringLit(x) { // Spark reads abs('5') as a DOUBLE
			var err error
			if x, err = coerceOperand(x, tDouble, n.Args[0]); err != nil {
				return nil, err
			}
		}
		if !x.typ.numeric() {
			return nil, typeErr(start(n.Args[0]), x.typ, "ABS needs a number, not %s", describeNode(n.Args[0], x.typ))
		}
		return fold(&expr{op: opFunc, typ: x.typ, pos: n.At, name: "ABS", args: []*expr{x}}), nil
	}
	return nil, errAt(ErrUnsupported, n.At, "function %s is not supported (supported: COALESCE, IFNULL, NVL, NULLIF, CONCAT, LOWER, UPPER, TRIM, LTRIM, RTRIM, LENGTH, ABS)", strings.ToLower(n.Name))
}

// checkCast refuses casts whose result would differ from Spark's, or that Spark's
// ANSI mode refuses.
func checkCast(from, to Type, n Node) error {
	switch {
	case from == to, from.Kind == KNull:
		return nil
	case from.Kind == KOther || to.Kind == KOther:
		return typeErr(start(n), from, "CAST of nested values is not supported")
	case to.Kind == KString && from.fractional():
		return typeErr(start(n), from, "CAST of %s to STRING is not supported: Spark formats floating-point numbers its own way", describeNode(n, from))
	case from.Kind == KBinary && to.Kind != KString, to.Kind == KBinary && from.Kind != KString:
		return typeErr(start(n), from, "cannot cast %s to %s", describeNode(n, from), to)
	case from.Kind == KBool && (to.datetime()), to.Kind == KBool && from.datetime():
		return typeErr(start(n), from, "cannot cast %s to %s", describeNode(n, from), to)
	case from.datetime() && to.numeric(), from.numeric() && to.datetime():
		return typeErr(start(n), from, "cannot cast %s to %s (Spark's ANSI mode refuses it)", describeNode(n, from), to)
	}
	return nil
}
