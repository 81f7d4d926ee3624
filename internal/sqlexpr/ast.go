package sqlexpr

import (
	"strings"
)

// Node is a parsed, untyped expression.
type Node interface {
	// Pos is the byte offset of the node in the expression.
	Pos() int
	// SQL renders the node back as Spark SQL, every operation parenthesized.
	SQL() string
}

type (
	// Lit is a literal: Kind says how it was written.
	Lit struct {
		At   int
		Kind LitKind
		// Text is the number as written (suffix included), the string's value, the
		// binary literal's hex digits, or the typed literal's string.
		Text string
	}
	// Col is a column reference.
	Col struct {
		At   int
		Name string
	}
	// Unary is NOT x, -x or +x.
	Unary struct {
		At int
		Op string
		X  Node
	}
	// Binary is a binary operator: arithmetic, ||, comparison, AND, OR.
	Binary struct {
		At   int // the operator's position
		Op   string
		L, R Node
	}
	// In is x [NOT] IN (list).
	In struct {
		At   int
		Not  bool
		X    Node
		List []Node
	}
	// Between is x [NOT] BETWEEN lo AND hi.
	Between struct {
		At        int
		Not       bool
		X, Lo, Hi Node
	}
	// Like is x [NOT] LIKE/ILIKE pattern [ESCAPE 'c'].
	Like struct {
		At         int
		Not, Fold  bool // Fold: ILIKE
		X, Pattern Node
		Escape     *Lit
	}
	// Is is x IS [NOT] NULL/TRUE/FALSE/UNKNOWN, or x IS [NOT] DISTINCT FROM y.
	Is struct {
		At   int
		Not  bool
		What string // "NULL", "TRUE", "FALSE", "UNKNOWN", "DISTINCT"
		X, Y Node
	}
	// Case is CASE [operand] WHEN ... THEN ... [ELSE ...] END.
	Case struct {
		At      int
		Operand Node // nil for a searched CASE
		Whens   []When
		Else    Node
	}
	// Cast is CAST(x AS type).
	Cast struct {
		At   int
		X    Node
		To   Type
		Name string // the type as written
	}
	// Call is a function call.
	Call struct {
		At   int
		Name string // upper case
		Args []Node
	}
)

// When is one WHEN ... THEN ... of a Case.
type When struct{ Cond, Then Node }

// LitKind says how a literal was written.
type LitKind uint8

// Literal kinds.
const (
	LitNull LitKind = iota
	LitBool
	LitNumber
	LitString
	LitBinary
	LitDate
	LitTimestamp
	LitTimestampNTZ
)

func (n *Lit) Pos() int     { return n.At }
func (n *Col) Pos() int     { return n.At }
func (n *Unary) Pos() int   { return n.At }
func (n *Binary) Pos() int  { return n.At }
func (n *In) Pos() int      { return n.At }
func (n *Between) Pos() int { return n.At }
func (n *Like) Pos() int    { return n.At }
func (n *Is) Pos() int      { return n.At }
func (n *Case) Pos() int    { return n.At }
func (n *Cast) Pos() int    { return n.At }
func (n *Call) Pos() int    { return n.At }

// SQL renders the literal.
func (n *Lit) SQL() string {
	switch n.Kind {
	case LitNull:
		return "NULL"
	case LitBool, LitNumber:
		return strings.ToLower(n.Text)
	case LitBinary:
		return "X'" + n.Text + "'"
	case LitDate:
		return "DATE " + quote(n.Text)
	case LitTimestamp:
		return "TIMESTAMP " + quote(n.Text)
	case LitTimestampNTZ:
		return "TIMESTAMP_NTZ " + quote(n.Text)
	}
	return quote(n.Text)
}

// quote renders s as a Spark string literal.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return "'" + r.Replace(s) + "'"
}

// QuoteName renders a column name as Spark does: bare when it is a plain
// identifier, else in backquotes.
func QuoteName(s string) string {
	plain := s != "" && isIdentStart(s[0]) && !keywords[strings.ToUpper(s)]
	for i := 0; plain && i < len(s); i++ {
		plain = isIdentPart(s[i])
	}
	if plain {
		return s
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

func (n *Col) SQL() string { return QuoteName(n.Name) }
func (n *Unary) SQL() string {
	if n.Op == "NOT" {
		return "(NOT " + n.X.SQL() + ")"
	}
	return "(" + n.Op + n.X.SQL() + ")"
}
func (n *Binary) SQL() string { return "(" + n.L.SQL() + " " + n.Op + " " + n.R.SQL() + ")" }
func (n *In) SQL() string {
	parts := make([]string, len(n.List))
	for i, x := range n.List {
		parts[i] = x.SQL()
	}
	return "(" + n.X.SQL() + not(n.Not) + " IN (" + strings.Join(parts, ", ") + "))"
}
func (n *Between) SQL() string {
	return "(" + n.X.SQL() + not(n.Not) + " BETWEEN " + n.Lo.SQL() + " AND " + n.Hi.SQL() + ")"
}
func (n *Like) SQL() string {
	op := " LIKE "
	if n.Fold {
		op = " ILIKE "
	}
	s := "(" + n.X.SQL() + not(n.Not) + op + n.Pattern.SQL()
	if n.Escape != nil {
		s += " ESCAPE " + n.Escape.SQL()
	}
	return s + ")"
}
func (n *Is) SQL() string {
	s := "(" + n.X.SQL() + " IS" + not(n.Not) + " " + n.What
	if n.What == "DISTINCT" {
		s += " FROM " + n.Y.SQL()
	}
	return s + ")"
}
func (n *Case) SQL() string {
	var b strings.Builder
	b.WriteString("CASE")
	if n.Operand != nil {
		b.WriteString(" " + n.Operand.SQL())
	}
	for _, w := range n.Whens {
		b.WriteString(" WHEN " + w.Cond.SQL() + " THEN " + w.Then.SQL())
	}
	if n.Else != nil {
		b.WriteString(" ELSE " + n.Else.SQL())
	}
	b.WriteString(" END")
	return b.String()
}
func (n *Cast) SQL() string { return "CAST(" + n.X.SQL() + " AS " + n.To.String() + ")" }
func (n *Call) SQL() string {
	parts := make([]string, len(n.Args))
	for i, x := range n.Args {
		parts[i] = x.SQL()
	}
	return strings.ToLower(n.Name) + "(" + strings.Join(parts, ", ") + ")"
}

func not(b bool) string {
	if b {
		return " NOT"
	}
	return ""
}

// start is where the text of n begins: a binary operation's left operand, not its
// operator.
func start(n Node) int {
	switch n := n.(type) {
	case *Binary:
		return start(n.L)
	case *In:
		return start(n.X)
	case *Between:
		return start(n.X)
	case *Like:
		return start(n.X)
	case *Is:
		return start(n.X)
	}
	return n.Pos()
}
