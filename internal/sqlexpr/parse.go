package sqlexpr

import (
	"strconv"
	"strings"
)

// maxDepth bounds nesting, so a hostile expression cannot exhaust the stack.
const maxDepth = 200

// keywords cannot be bare column names (quote them: `end`).
var keywords = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IS": true, "NULL": true, "TRUE": true, "FALSE": true,
	"IN": true, "BETWEEN": true, "LIKE": true, "ILIKE": true, "RLIKE": true, "REGEXP": true, "ESCAPE": true,
	"CASE": true, "WHEN": true, "THEN": true, "ELSE": true, "END": true, "CAST": true, "AS": true,
	"DISTINCT": true, "FROM": true, "DIV": true, "INTERVAL": true,
}

type parser struct {
	toks  []token
	i     int
	depth int
}

// Parse parses one expression.
func Parse(src string) (Node, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	n, err := p.expr(0)
	if err == nil && p.peek().kind != tkEOF {
		err = p.unexpected("end of expression")
	}
	if err != nil {
		return nil, withExpr(err, src)
	}
	return n, nil
}

// Assignment is one `column = expression` of an UPDATE's SET list.
type Assignment struct {
	Column string
	At     int // the column's position
	Value  Node
}

// ParseAssignments parses a SET list: `col = expr [, col = expr ...]`.
func ParseAssignments(src string) ([]Assignment, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	var out []Assignment
	for {
		t := p.next()
		if t.kind != tkIdent && t.kind != tkQuoted || t.kind == tkIdent && keywords[strings.ToUpper(t.text)] {
			return nil, withExpr(errAt(ErrSyntax, t.pos, "expected a column name, found %s", describe(t)), src)
		}
		if p.peek().kind == tkOp && p.peek().text == "." || p.peek().kind == tkNumber && strings.HasPrefix(p.peek().text, ".") {
			return nil, withExpr(errAt(ErrUnsupported, p.peek().pos, "nested fields cannot be set"), src)
		}
		if eq := p.next(); eq.kind != tkOp || eq.text != "=" {
			return nil, withExpr(errAt(ErrSyntax, eq.pos, "expected = after the column name, found %s", describe(eq)), src)
		}
		v, err := p.expr(0)
		if err != nil {
			return nil, withExpr(err, src)
		}
		out = append(out, Assignment{Column: t.text, At: t.pos, Value: v})
		switch t := p.next(); {
		case t.kind == tkEOF:
			return out, nil
		case t.kind == tkOp && t.text == ",":
		default:
			return nil, withExpr(errAt(ErrSyntax, t.pos, "expected , or the end of the SET list, found %s", describe(t)), src)
		}
	}
}

func newParser(src string) (*parser, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, withExpr(err, src)
	}
	return &parser{toks: toks}, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tkEOF {
		p.i++
	}
	return t
}

func describe(t token) string {
	switch t.kind {
	case tkEOF:
		return "the end"
	case tkString:
		return "a string"
	case tkNumber:
		return "number " + t.text
	case tkQuoted:
		return "`" + t.text + "`"
	}
	return strconv.Quote(t.text)
}

func (p *parser) unexpected(want string) error {
	t := p.peek()
	return errAt(ErrSyntax, t.pos, "expected %s, found %s", want, describe(t))
}

func (p *parser) expectOp(op string) error {
	if t := p.peek(); t.kind == tkOp && t.text == op {
		p.next()
		return nil
	}
	return p.unexpected(strconv.Quote(op))
}

func (p *parser) expectKW(kw string) error {
	if p.peek().is(kw) {
		p.next()
		return nil
	}
	return p.unexpected(kw)
}

// Binding powers, lowest first.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp
	precAdd
	precMul
	precUnary
)

// infixPrec returns the binding power of the operator at the cursor, 0 if none.
func (p *parser) infixPrec() int {
	t := p.peek()
	switch {
	case t.kind == tkOp:
		switch t.text {
		case "=", "==", "<>", "!=", "<", "<=", ">", ">=", "<=>":
			return precCmp
		case "+", "-", "||":
			return precAdd
		case "*", "/", "%":
			return precMul
		}
	case t.is("OR"):
		return precOr
	case t.is("AND"):
		return precAnd
	case t.is("DIV"):
		return precMul
	case t.is("IS"), t.is("IN"), t.is("BETWEEN"), t.is("LIKE"), t.is("ILIKE"), t.is("RLIKE"), t.is("REGEXP"):
		return precCmp
	case t.is("NOT"):
		if n := p.peekAt(1); n.is("IN") || n.is("BETWEEN") || n.is("LIKE") || n.is("ILIKE") || n.is("RLIKE") || n.is("REGEXP") {
			return precCmp
		}
	}
	return 0
}

// expr parses an expression whose operators bind tighter than min.
func (p *parser) expr(min int) (Node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, errAt(ErrSyntax, p.peek().pos, "expression nested too deeply")
	}
	left, err := p.prefix()
	if err != nil {
		return nil, err
	}
	for {
		prec := p.infixPrec()
		if prec == 0 || prec <= min {
			return left, nil
		}
		if left, err = p.infix(left, prec); err != nil {
			return nil, err
		}
	}
}

func (p *parser) infix(left Node, prec int) (Node, error) {
	t := p.next()
	switch {
	case t.kind == tkOp:
		right, err := p.expr(prec)
		if err != nil {
			return nil, err
		}
		op := t.text
		switch op {
		case "==":
			op = "="
		case "!=":
			op = "<>"
		}
		return &Binary{At: t.pos, Op: op, L: left, R: right}, nil
	case t.is("OR"), t.is("AND"), t.is("DIV"):
		right, err := p.expr(prec)
		if err != nil {
			return nil, err
		}
		op := strings.ToUpper(t.text)
		if op == "DIV" {
			op = "div" // as Spark renders it: (a div b)
		}
		return &Binary{At: t.pos, Op: op, L: left, R: right}, nil
	case t.is("IS"):
		n := &Is{At: t.pos, X: left}
		if p.peek().is("NOT") {
			p.next()
			n.Not = true
		}
		w := p.next()
		switch {
		case w.is("NULL"), w.is("TRUE"), w.is("FALSE"), w.is("UNKNOWN"):
			n.What = strings.ToUpper(w.text)
		case w.is("DISTINCT"):
			if err := p.expectKW("FROM"); err != nil {
				return nil, err
			}
			n.What = "DISTINCT"
			y, err := p.expr(precCmp)
			if err != nil {
				return nil, err
			}
			n.Y = y
		default:
			return nil, errAt(ErrSyntax, w.pos, "expected NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS, found %s", describe(w))
		}
		return n, nil
	}
	not := false
	if t.is("NOT") {
		not = true
		t = p.next()
	}
	switch {
	case t.is("IN"):
		if p.peekAt(1).is("SELECT") {
			return nil, errAt(ErrUnsupported, p.peek().pos, "subqueries are not supported")
		}
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		n := &In{At: t.pos, Not: not, X: left}
		for {
			x, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			n.List = append(n.List, x)
			if p.peek().kind == tkOp && p.peek().text == "," {
				p.next()
				continue
			}
			return n, p.expectOp(")")
		}
	case t.is("BETWEEN"):
		lo, err := p.expr(precCmp)
		if err != nil {
			return nil, err
		}
		if err := p.expectKW("AND"); err != nil {
			return nil, err
		}
		hi, err := p.expr(precCmp)
		if err != nil {
			return nil, err
		}
		return &Between{At: t.pos, Not: not, X: left, Lo: lo, Hi: hi}, nil
	case t.is("LIKE"), t.is("ILIKE"):
		if p.peek().is("ANY") || p.peek().is("ALL") || p.peek().is("SOME") {
			return nil, errAt(ErrUnsupported, p.peek().pos, "LIKE %s is not supported", strings.ToUpper(p.peek().text))
		}
		pat, err := p.expr(precCmp)
		if err != nil {
			return nil, err
		}
		n := &Like{At: t.pos, Not: not, Fold: t.is("ILIKE"), X: left, Pattern: pat}
		if p.peek().is("ESCAPE") {
			p.next()
			e := p.next()
			if e.kind != tkString {
				return nil, errAt(ErrSyntax, e.pos, "ESCAPE takes a string literal, found %s", describe(e))
			}
			n.Escape = &Lit{At: e.pos, Kind: LitString, Text: e.text}
		}
		return n, nil
	}
	return nil, errAt(ErrUnsupported, t.pos, "%s is not supported", strings.ToUpper(t.text))
}

func (p *parser) prefix() (Node, error) {
	t := p.next()
	switch t.kind {
	case tkEOF:
		return nil, errAt(ErrSyntax, t.pos, "expected an expression, found the end")
	case tkNumber:
		return &Lit{At: t.pos, Kind: LitNumber, Text: t.text}, nil
	case tkString:
		return &Lit{At: t.pos, Kind: LitString, Text: t.text}, nil
	case tkBinary:
		return &Lit{At: t.pos, Kind: LitBinary, Text: t.text}, nil
	case tkQuoted:
		return p.column(t)
	case tkOp:
		switch t.text {
		case "(":
			if p.peek().is("SELECT") {
				return nil, errAt(ErrUnsupported, p.peek().pos, "subqueries are not supported")
			}
			n, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			return n, p.expectOp(")")
		case "-", "+":
			x, err := p.expr(precUnary - 1)
			if err != nil {
				return nil, err
			}
			return &Unary{At: t.pos, Op: t.text, X: x}, nil
		}
		return nil, errAt(ErrSyntax, t.pos, "expected an expression, found %s", describe(t))
	}
	word := strings.ToUpper(t.text)
	switch word {
	case "NULL":
		return &Lit{At: t.pos, Kind: LitNull}, nil
	case "TRUE", "FALSE":
		return &Lit{At: t.pos, Kind: LitBool, Text: word}, nil
	case "NOT":
		x, err := p.expr(precNot - 1)
		if err != nil {
			return nil, err
		}
		return &Unary{At: t.pos, Op: "NOT", X: x}, nil
	case "CASE":
		return p.caseExpr(t)
	case "CAST", "TRY_CAST":
		if word == "TRY_CAST" {
			return nil, errAt(ErrUnsupported, t.pos, "TRY_CAST is not supported")
		}
		return p.cast(t)
	case "INTERVAL":
		return nil, errAt(ErrUnsupported, t.pos, "INTERVAL literals are not supported")
	case "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ":
		if s := p.peek(); s.kind == tkString {
			p.next()
			k := map[string]LitKind{"DATE": LitDate, "TIMESTAMP": LitTimestamp, "TIMESTAMP_LTZ": LitTimestamp, "TIMESTAMP_NTZ": LitTimestampNTZ}[word]
			return &Lit{At: t.pos, Kind: k, Text: s.text}, nil
		}
	}
	if keywords[word] {
		return nil, errAt(ErrSyntax, t.pos, "expected an expression, found %s (quote a column of that name with backticks: `%s`)", word, t.text)
	}
	if n := p.peek(); n.kind == tkOp && n.text == "(" {
		return p.call(t)
	}
	return p.column(t)
}

func (p *parser) column(t token) (Node, error) {
	if n := p.peek(); n.kind == tkOp && n.text == "." || n.kind == tkNumber && strings.HasPrefix(n.text, ".") {
		return nil, errAt(ErrUnsupported, n.pos, "qualified names and nested fields are not supported: name the column alone, quoted with backticks if it holds a dot")
	}
	return &Col{At: t.pos, Name: t.text}, nil
}

func (p *parser) call(name token) (Node, error) {
	p.next() // (
	n := &Call{At: name.pos, Name: strings.ToUpper(name.text)}
	if p.peek().is("DISTINCT") {
		return nil, errAt(ErrUnsupported, p.peek().pos, "aggregate functions are not supported")
	}
	if t := p.peek(); t.kind == tkOp && t.text == ")" {
		p.next()
		return n, nil
	}
	for {
		x, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		n.Args = append(n.Args, x)
		if t := p.peek(); t.kind == tkOp && t.text == "," {
			p.next()
			continue
		}
		return n, p.expectOp(")")
	}
}

func (p *parser) caseExpr(t token) (Node, error) {
	n := &Case{At: t.pos}
	if !p.peek().is("WHEN") {
		x, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		n.Operand = x
	}
	for p.peek().is("WHEN") {
		p.next()
		c, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if err := p.expectKW("THEN"); err != nil {
			return nil, err
		}
		v, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		n.Whens = append(n.Whens, When{Cond: c, Then: v})
	}
	if len(n.Whens) == 0 {
		return nil, p.unexpected("WHEN")
	}
	if p.peek().is("ELSE") {
		p.next()
		e, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		n.Else = e
	}
	return n, p.expectKW("END")
}

func (p *parser) cast(t token) (Node, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	x, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if err := p.expectKW("AS"); err != nil {
		return nil, err
	}
	tn := p.next()
	if tn.kind != tkIdent {
		return nil, errAt(ErrSyntax, tn.pos, "expected a type name, found %s", describe(tn))
	}
	name := strings.ToUpper(tn.text)
	var args []int
	if o := p.peek(); o.kind == tkOp && o.text == "(" {
		p.next()
		for {
			a := p.next()
			v, err := strconv.Atoi(a.text)
			if a.kind != tkNumber || err != nil {
				return nil, errAt(ErrSyntax, a.pos, "expected a number in the type's arguments, found %s", describe(a))
			}
			args = append(args, v)
			if c := p.peek(); c.kind == tkOp && c.text == "," {
				p.next()
				continue
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			break
		}
	}
	to, ok := parseTypeName(name, args)
	if !ok {
		if name == "VARCHAR" || name == "CHAR" || name == "ARRAY" || name == "MAP" || name == "STRUCT" || name == "INTERVAL" || name == "VARIANT" {
			return nil, errAt(ErrUnsupported, tn.pos, "CAST to %s is not supported", name)
		}
		return nil, errAt(ErrType, tn.pos, "unknown type %s", tn.text)
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return &Cast{At: t.pos, X: x, To: to, Name: name}, nil
}
