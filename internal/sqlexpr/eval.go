package sqlexpr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// evalError is a failure without a position; eval attaches the node's.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func failf(format string, args ...any) error { return &evalError{fmt.Sprintf(format, args...)} }

// fold evaluates a node whose operands are all constants; one that fails stays, to
// fail when (and only if) a row evaluates it, as Spark's ANSI errors are raised.
func fold(e *expr) *expr {
	for _, a := range e.args {
		if a.op != opConst {
			return e
		}
	}
	v, err := e.eval(nil)
	if err != nil {
		return e
	}
	return constant(e.typ, v, e.pos)
}

func (e *expr) fail(err error) error {
	var ee *evalError
	if errors.As(err, &ee) {
		return &Error{Kind: ErrEval, Pos: e.pos, Msg: ee.msg, Type: e.typ.String()}
	}
	return err
}

// eval computes the node over a row of the datafile package's conventions.
func (e *expr) eval(row []any) (any, error) {
	switch e.op {
	case opConst:
		return e.val, nil
	case opCol:
		v, err := fromRow(e.typ, row[e.col])
		if err != nil {
			return nil, e.fail(err)
		}
		return v, nil
	case opAnd, opOr:
		l, err := e.args[0].eval(row)
		if err != nil {
			return nil, err
		}
		short := e.op == opOr // OR stops at TRUE, AND at FALSE
		if l != nil && l.(bool) == short {
			return short, nil
		}
		r, err := e.args[1].eval(row)
		if err != nil {
			return nil, err
		}
		if r != nil && r.(bool) == short {
			return short, nil
		}
		if l == nil || r == nil {
			return nil, nil
		}
		return !short, nil
	case opCase:
		n := len(e.args)
		if e.hasElse {
			n--
		}
		for i := 0; i < n; i += 2 {
			c, err := e.args[i].eval(row)
			if err != nil {
				return nil, err
			}
			if c == true {
				return e.args[i+1].eval(row)
			}
		}
		if e.hasElse {
			return e.args[len(e.args)-1].eval(row)
		}
		return nil, nil
	case opCoalesce:
		for _, a := range e.args {
			v, err := a.eval(row)
			if err != nil || v != nil {
				return v, err
			}
		}
		return nil, nil
	}
	vals := make([]any, len(e.args))
	for i, a := range e.args {
		v, err := a.eval(row)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	v, err := e.apply(vals)
	if err != nil {
		return nil, e.fail(err)
	}
	return v, nil
}

// apply computes a strict node (NULL in, NULL out unless the operator says otherwise)
// from its operands' values.
func (e *expr) apply(vals []any) (any, error) {
	switch e.op {
	case opNot:
		if vals[0] == nil {
			return nil, nil
		}
		return !vals[0].(bool), nil
	case opIsNull:
		return (vals[0] == nil) != e.not, nil
	case opIsBool:
		return (vals[0] == e.val) != e.not, nil
	case opCmp:
		a, b := vals[0], vals[1]
		if e.name == "<=>" {
			if a == nil || b == nil {
				return a == nil && b == nil, nil
			}
			return compare(e.args[0].typ, a, b) == 0, nil
		}
		if a == nil || b == nil {
			return nil, nil
		}
		c := compare(e.args[0].typ, a, b)
		switch e.name {
		case "=":
			return c == 0, nil
		case "<>":
			return c != 0, nil
		case "<":
			return c < 0, nil
		case "<=":
			return c <= 0, nil
		case ">":
			return c > 0, nil
		}
		return c >= 0, nil
	case opIn:
		if vals[0] == nil {
			return nil, nil
		}
		sawNull := false
		for _, v := range vals[1:] {
			if v == nil {
				sawNull = true
			} else if compare(e.args[0].typ, vals[0], v) == 0 {
				return true, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return false, nil
	}
	for _, v := range vals {
		if v == nil {
			return nil, nil
		}
	}
	switch e.op {
	case opCast:
		return castValue(vals[0], e.args[0].typ, e.typ)
	case opNeg:
		return negate(e.typ, vals[0])
	case opArith:
		return arith(e.name, e.typ, e.args[0].typ, e.args[1].typ, vals[0], vals[1])
	case opConcat:
		return vals[0].(string) + vals[1].(string), nil
	case opLike:
		lp := e.like
		if lp == nil {
			var err *Error
			if lp, err = compileLike(vals[1].(string), e.escape, e.fold); err != nil {
				return nil, failf("%s", err.Msg)
			}
		}
		return lp.match(vals[0].(string))
	case opFunc:
		return function(e.name, e.typ, vals[0])
	}
	return nil, failf("unsupported operation")
}

// compare orders two non-null values of type t: numbers by value (NaN above every
// other number and equal to itself, as in Spark), strings and binaries by bytes.
func compare(t Type, a, b any) int {
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case float64:
		y := b.(float64)
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		switch {
		case xn && yn:
			return 0
		case xn:
			return 1
		case yn:
			return -1
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case *big.Int:
		return x.Cmp(b.(*big.Int))
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	}
	return 0
}

func checkInt(t Type, v int64) (any, error) {
	lo, hi := intRange(t.Kind)
	if v < lo || v > hi {
		return nil, failf("[ARITHMETIC_OVERFLOW] %d overflows %s", v, t)
	}
	return v, nil
}

func roundFloat(t Type, f float64) float64 {
	if t.Kind == KFloat {
		return float64(float32(f))
	}
	return f
}

func negate(t Type, v any) (any, error) {
	switch x := v.(type) {
	case int64:
		if x == math.MinInt64 {
			return nil, failf("[ARITHMETIC_OVERFLOW] -(%d) overflows %s", x, t)
		}
		return checkInt(t, -x)
	case float64:
		return -x, nil
	case *big.Int:
		return new(big.Int).Neg(x), nil
	}
	return nil, failf("cannot negate %T", v)
}

// arith computes a op b with both operands already of the operation's input types;
// t is the result type.
func arith(op string, t, lt, rt Type, a, b any) (any, error) {
	if op == "div" {
		return integralQuotient(lt, rt, a, b)
	}
	switch t.Kind {
	case KDouble, KFloat:
		x, y := toFloat(lt, a), toFloat(rt, b)
		var r float64
		switch op {
		case "+":
			r = x + y
		case "-":
			r = x - y
		case "*":
			r = x * y
		case "/":
			if y == 0 {
				return nil, failf("[DIVIDE_BY_ZERO] division by zero")
			}
			r = x / y
		case "%":
			if y == 0 {
				return nil, failf("[REMAINDER_BY_ZERO] remainder by zero")
			}
			r = math.Mod(x, y)
		}
		return roundFloat(t, r), nil
	case KDecimal:
		x, y := a.(*big.Int), b.(*big.Int)
		s1, s2 := lt.S, rt.S
		var r *big.Int
		switch op {
		case "+", "-":
			s := max(s1, s2)
			xx, yy := rescale(x, s1, s), rescale(y, s2, s)
			if op == "+" {
				r = new(big.Int).Add(xx, yy)
			} else {
				r = new(big.Int).Sub(xx, yy)
			}
			r = rescale(r, s, t.S)
		case "*":
			r = rescale(new(big.Int).Mul(x, y), s1+s2, t.S)
		case "/":
			if y.Sign() == 0 {
				return nil, failf("[DIVIDE_BY_ZERO] division by zero")
			}
			// x/10^s1 ÷ y/10^s2 at scale S: x·10^(S+s2-s1) / y.
			num := new(big.Int).Set(x)
			if k := t.S + s2 - s1; k >= 0 {
				num.Mul(num, pow10(k))
				r = divHalfUp(num, y)
			} else {
				r = divHalfUp(num, new(big.Int).Mul(y, pow10(-k)))
			}
		case "%":
			if y.Sign() == 0 {
				return nil, failf("[REMAINDER_BY_ZERO] remainder by zero")
			}
			s := max(s1, s2)
			r = new(big.Int).Rem(rescale(x, s1, s), rescale(y, s2, s))
			r = rescale(r, s, t.S)
		}
		if !fitsPrecision(r, t.P) {
			return nil, failf("[NUMERIC_VALUE_OUT_OF_RANGE] %s does not fit %s", decimalString(r, t.S), t)
		}
		return r, nil
	}
	x, y := a.(int64), b.(int64)
	var r int64
	switch op {
	case "+":
		r = x + y
		if (r > x) != (y > 0) {
			return nil, failf("[ARITHMETIC_OVERFLOW] %d + %d overflows %s", x, y, t)
		}
	case "-":
		r = x - y
		if (r < x) != (y > 0) {
			return nil, failf("[ARITHMETIC_OVERFLOW] %d - %d overflows %s", x, y, t)
		}
	case "*":
		if x != 0 && y != 0 {
			hi, lo := new(big.Int).Mul(big.NewInt(x), big.NewInt(y)), int64(0)
			if !hi.IsInt64() {
				return nil, failf("[ARITHMETIC_OVERFLOW] %d * %d overflows %s", x, y, t)
			}
			lo = hi.Int64()
			r = lo
		}
	case "%":
		if y == 0 {
			return nil, failf("[REMAINDER_BY_ZERO] remainder by zero")
		}
		if y == -1 {
			return int64(0), nil
		}
		r = x % y
	}
	return checkInt(t, r)
}

// integralQuotient is a div b truncated toward zero, for two BIGINTs or two decimals.
func integralQuotient(lt, rt Type, a, b any) (any, error) {
	if x, ok := a.(int64); ok {
		y := b.(int64)
		switch {
		case y == 0:
			return nil, failf("[DIVIDE_BY_ZERO] division by zero")
		case x == math.MinInt64 && y == -1:
			return nil, failf("[ARITHMETIC_OVERFLOW] %d div %d overflows BIGINT", x, y)
		}
		return x / y, nil
	}
	x, y := a.(*big.Int), b.(*big.Int)
	if y.Sign() == 0 {
		return nil, failf("[DIVIDE_BY_ZERO] division by zero")
	}
	// x/10^s1 ÷ y/10^s2 = x·10^s2 / (y·10^s1).
	q := new(big.Int).Quo(new(big.Int).Mul(x, pow10(rt.S)), new(big.Int).Mul(y, pow10(lt.S)))
	if !q.IsInt64() {
		// Spark keeps the low 64 bits of such a quotient; refuse rather than wrap.
		return nil, failf("[ARITHMETIC_OVERFLOW] %s div %s overflows BIGINT", decimalString(x, lt.S), decimalString(y, rt.S))
	}
	return q.Int64(), nil
}

func toFloat(t Type, v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case *big.Int:
		return decimalToFloat(x, t.S)
	}
	return math.NaN()
}

func function(name string, t Type, v any) (any, error) {
	switch name {
	case "LOWER", "UPPER":
		s := v.(string)
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return nil, failf("%s of non-ASCII text is not supported (Java's case mapping differs from Go's)", strings.ToLower(name))
			}
		}
		if name == "LOWER" {
			return strings.ToLower(s), nil
		}
		return strings.ToUpper(s), nil
	case "TRIM":
		return strings.Trim(v.(string), " "), nil
	case "LTRIM":
		return strings.TrimLeft(v.(string), " "), nil
	case "RTRIM":
		return strings.TrimRight(v.(string), " "), nil
	case "LENGTH":
		return int64(utf8.RuneCountInString(v.(string))), nil
	case "ABS":
		switch x := v.(type) {
		case int64:
			if x < 0 {
				return negate(t, x)
			}
			return x, nil
		case float64:
			return math.Abs(x), nil
		case *big.Int:
			return new(big.Int).Abs(x), nil
		}
	}
	return nil, failf("unsupported function %s", name)
}

// castValue converts a non-null value from one type to another with Spark's ANSI cast
// semantics (checkCast has refused the casts we do not reproduce).
func castValue(v any, from, to Type) (any, error) {
	if v == nil || from == to {
		return v, nil
	}
	bad := func() (any, error) {
		return nil, failf("[CAST_INVALID_INPUT] %s cannot be cast to %s", render(from, v), to)
	}
	overflow := func() (any, error) {
		return nil, failf("[CAST_OVERFLOW] %s does not fit %s", render(from, v), to)
	}
	switch {
	case to.Kind == KString:
		s, ok := toText(from, v)
		if !ok {
			return nil, failf("casting %s to STRING is not supported", render(from, v))
		}
		return s, nil
	case from.Kind == KString:
		return parseAs(v.(string), to, bad, overflow)
	case to.Kind == KBool:
		switch x := v.(type) {
		case int64:
			return x != 0, nil
		case float64:
			return x != 0, nil
		case *big.Int:
			return x.Sign() != 0, nil
		}
	case from.Kind == KBool:
		b := v.(bool)
		switch {
		case to.integral():
			return map[bool]int64{true: 1, false: 0}[b], nil
		case to.fractional():
			return map[bool]float64{true: 1, false: 0}[b], nil
		case to.Kind == KDecimal:
			r := big.NewInt(map[bool]int64{true: 1, false: 0}[b])
			r = rescale(r, 0, to.S)
			if !fitsPrecision(r, to.P) {
				return overflow()
			}
			return r, nil
		}
	case to.integral():
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case float64:
			t := math.Trunc(x)
			switch {
			case math.IsNaN(x) || t < math.MinInt64 || t > math.MaxInt64:
				return overflow()
			case t == math.MaxInt64:
				// 2^63: Spark's bound check passes it (Long.MaxValue as a double is 2^63)
				// and Java's conversion saturates.
				n = math.MaxInt64
			default:
				n = int64(t)
			}
		case *big.Int:
			q := new(big.Int).Quo(x, pow10(from.S)) // truncates toward zero
			if !q.IsInt64() {
				return overflow()
			}
			n = q.Int64()
		}
		lo, hi := intRange(to.Kind)
		if n < lo || n > hi {
			return overflow()
		}
		return n, nil
	case to.fractional():
		return roundFloat(to, toFloat(from, v)), nil
	case to.Kind == KDecimal:
		var r *big.Int
		switch x := v.(type) {
		case int64:
			r = rescale(big.NewInt(x), 0, to.S)
		case float64:
			// A FLOAT too goes through its DOUBLE text, as Spark widens it first:
			// 0.1f is 0.10000000149011612.
			d, ok := floatToDecimal(x, 64, 76, to.S)
			if !ok {
				return overflow()
			}
			r = d
		case *big.Int:
			r = rescale(x, from.S, to.S)
		}
		if to.P <= 38 && !fitsPrecision(r, to.P) {
			return overflow()
		}
		return r, nil
	case to.datetime():
		us := v.(int64)
		if from.Kind == KDate {
			us *= microsPerDay
		}
		if to.Kind == KDate {
			return floorDiv(us, microsPerDay), nil
		}
		return us, nil
	case to.Kind == KBinary:
		return []byte(v.(string)), nil
	}
	return bad()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// toText renders a value as Spark casts it to a string.
func toText(t Type, v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case []byte:
		return string(x), true
	case *big.Int:
		// Spark renders decimals plainly (0.00000010, never 1.0E-7).
		return decimalString(x, t.S), true
	case int64:
		switch t.Kind {
		case KDate:
			return formatDate(x)
		case KTimestamp, KTimestampNTZ:
			return formatTimestamp(x)
		}
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}

// render shows a value in an error message.
func render(t Type, v any) string {
	if s, ok := toText(t, v); ok {
		if t.Kind == KString {
			return quote(s)
		}
		return s
	}
	return fmt.Sprint(v)
}

// parseAs casts a string to a type as Spark's ANSI cast does, trimming whitespace.
func parseAs(s string, to Type, bad, overflow func() (any, error)) (any, error) {
	t := strings.TrimSpace(s)
	switch {
	case to.Kind == KBool:
		switch strings.ToLower(t) {
		case "t", "true", "y", "yes", "1":
			return true, nil
		case "f", "false", "n", "no", "0":
			return false, nil
		}
		return bad()
	case to.integral():
		digitsOnly := strings.TrimLeft(t, "+-")
		if digitsOnly == "" || len(t)-len(digitsOnly) > 1 || strings.TrimLeft(digitsOnly, "0123456789") != "" {
			if strings.Contains(t, ".") {
				return nil, failf("casting %s to %s is not supported: Spark's result for a fraction depends on its settings", quote(s), to)
			}
			return bad()
		}
		n, err := strconv.ParseInt(t, 10, 64)
		lo, hi := intRange(to.Kind)
		if err != nil || n < lo || n > hi {
			return overflow()
		}
		return n, nil
	case to.fractional():
		f, ok := parseJavaFloat(t, to.Kind == KFloat)
		if !ok {
			return bad()
		}
		return f, nil
	case to.Kind == KDecimal:
		r, ok := parseDecimalText(t)
		if !ok {
			return bad()
		}
		v, ok := ratToDecimal(r, to.P, to.S)
		if !ok {
			return overflow()
		}
		return v, nil
	case to.Kind == KDate:
		d, ok := parseDate(t)
		if !ok {
			return bad()
		}
		return d, nil
	case to.Kind == KTimestamp, to.Kind == KTimestampNTZ:
		us, ok := parseTimestamp(t, to.Kind == KTimestampNTZ)
		if !ok {
			return bad()
		}
		return us, nil
	case to.Kind == KBinary:
		return []byte(s), nil
	}
	return bad()
}

// parseJavaFloat reads text as Spark casts a string to a DOUBLE (or a FLOAT when
// single): its own inf, infinity and nan in any case, else Java's
// Double.parseDouble, which takes a trailing d or f ("1.5d") and hexadecimal
// ("0x1p3") but no underscores. A FLOAT is parsed to float32 directly, as
// Float.parseFloat does, not rounded twice through a double.
func parseJavaFloat(t string, single bool) (float64, bool) {
	switch strings.ToLower(t) {
	case "nan":
		return math.NaN(), true
	case "infinity", "+infinity", "inf", "+inf":
		return math.Inf(1), true
	case "-infinity", "-inf":
		return math.Inf(-1), true
	}
	switch strings.TrimLeft(t, "+-") {
	case "NaN":
		if len(t) <= 4 {
			return math.NaN(), true
		}
	case "Infinity":
		if len(t) <= 9 {
			return math.Inf(map[bool]int{true: -1, false: 1}[t[0] == '-']), true
		}
	}
	// A hexadecimal float ends in its decimal exponent, so a last d or f is a suffix
	// there too.
	if n := len(t); n > 0 && strings.ContainsRune("dDfF", rune(t[n-1])) {
		t = t[:n-1]
	}
	// Go reads inf, nan and underscores where Java does not.
	if t == "" || strings.ContainsAny(t, "_iInN") {
		return 0, false
	}
	bits := 64
	if single {
		bits = 32
	}
	f, err := strconv.ParseFloat(t, bits)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}
