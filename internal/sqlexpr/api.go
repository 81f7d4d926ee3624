package sqlexpr

import (
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Predicate is a bound WHERE condition.
type Predicate struct {
	e    *expr
	src  string
	sql  string
	cols []int
}

// BindPredicate parses src and binds it to schema as a condition.
func BindPredicate(src string, schema *deltalog.StructType) (*Predicate, error) {
	n, err := Parse(src)
	if err != nil {
		return nil, err
	}
	b := newBinder(schema)
	e, err := b.bind(n)
	if err == nil {
		e, err = b.boolean(e, n, "WHERE")
	}
	if err != nil {
		return nil, withExpr(err, src)
	}
	return &Predicate{e: e, src: src, sql: n.SQL(), cols: sortedCols(b.cols)}, nil
}

func sortedCols(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// SQL is the predicate as Spark renders it in commitInfo, every operation
// parenthesized: "(position > 10)".
func (p *Predicate) SQL() string { return p.sql }

// Columns are the schema field indexes the predicate reads, ascending.
func (p *Predicate) Columns() []int { return p.cols }

// Matches evaluates the predicate over a row aligned with the schema (only Columns
// need values): true only when the condition is TRUE, never for NULL.
func (p *Predicate) Matches(row []any) (bool, error) {
	v, err := p.e.eval(row)
	if err != nil {
		return false, withExpr(err, p.src)
	}
	return v == true, nil
}

// Setter is one bound `column = expression` of an UPDATE.
type Setter struct {
	// Column is the schema field index set.
	Column int
	e      *expr
	src    string
	sql    string
	name   string
	cols   []int
	t      Type
	null   bool // the column is nullable
}

// SetterOptions constrain [BindAssignments].
type SetterOptions struct {
	// Protected maps column names (exactly as in the schema) that cannot be set to
	// the reason, e.g. the key columns of a table the processor maintains.
	Protected map[string]string
}

// BindAssignments parses a SET list (`a = 1, b = b + 1`) and binds each assignment to
// schema with Spark's ANSI store-assignment rules: numbers convert to any numeric
// column (failing on overflow), a string literal is read as the column's type, a
// non-literal string does not go into a non-string column. A column set twice is an
// error.
func BindAssignments(src string, schema *deltalog.StructType, opts SetterOptions) ([]*Setter, error) {
	as, err := ParseAssignments(src)
	if err != nil {
		return nil, err
	}
	var out []*Setter
	seen := map[int]bool{}
	for _, a := range as {
		s, err := bindAssignment(a, schema, opts)
		if err != nil {
			return nil, withExpr(err, src)
		}
		if seen[s.Column] {
			return nil, withExpr(&Error{Kind: ErrColumn, Pos: a.At, Column: s.name, Msg: "column " + QuoteName(s.name) + " is set twice"}, src)
		}
		seen[s.Column] = true
		s.src = src
		out = append(out, s)
	}
	return out, nil
}

func bindAssignment(a Assignment, schema *deltalog.StructType, opts SetterOptions) (*Setter, error) {
	b := newBinder(schema)
	col, err := b.resolve(a.Column, a.At)
	if err != nil {
		return nil, err
	}
	f := schema.Fields[col]
	if why, ok := opts.Protected[f.Name]; ok {
		return nil, &Error{Kind: ErrColumn, Pos: a.At, Column: f.Name, Msg: "column " + QuoteName(f.Name) + " cannot be set: " + why}
	}
	target := b.types[col]
	x, err := b.bind(a.Value)
	if err != nil {
		return nil, err
	}
	e, err := storeAssign(x, target, a.Value, f)
	if err != nil {
		return nil, err
	}
	if !f.Nullable && e.op == opConst && e.val == nil {
		return nil, &Error{Kind: ErrType, Pos: start(a.Value), Column: f.Name, Type: target.String(), Msg: "column " + QuoteName(f.Name) + " is NOT NULL"}
	}
	return &Setter{Column: col, e: e, sql: QuoteName(f.Name) + " = " + a.Value.SQL(), name: f.Name, cols: sortedCols(b.cols), t: target, null: f.Nullable}, nil
}

// storeAssign converts x to the column type t as Spark's ANSI store assignment does.
func storeAssign(x *expr, t Type, n Node, f deltalog.StructField) (*expr, error) {
	refuse := func(why string) error {
		return &Error{Kind: ErrType, Pos: start(n), Column: f.Name, Type: x.typ.String(),
			Msg: "cannot assign " + describeNode(n, x.typ) + " to " + t.String() + " column " + QuoteName(f.Name) + why}
	}
	switch {
	case x.typ == t:
		return x, nil
	case x.typ.Kind == KNull:
		return constant(t, nil, x.pos), nil
	case t.Kind == KOther || x.typ.Kind == KOther:
		return nil, refuse(": nested values can only be set to NULL or to the column itself")
	case isStringLit(x) && t.Kind != KString:
		return coerceOperand(x, t, n)
	case x.typ.numeric() && t.numeric(), x.typ.datetime() && t.datetime():
		return castTo(x, t), nil
	case t.Kind == KString && x.typ.Kind != KBinary:
		if err := checkCast(x.typ, t, n); err != nil {
			return nil, err
		}
		return castTo(x, t), nil
	case x.typ.Kind == KString:
		return nil, refuse(" (Spark's ANSI store assignment refuses it; CAST it explicitly)")
	}
	return nil, refuse("")
}

// SQL renders the assignment as Spark does: "points = (11 - position)".
func (s *Setter) SQL() string { return s.sql }

// Columns are the schema field indexes the expression reads.
func (s *Setter) Columns() []int { return s.cols }

// Name is the column set, as the schema names it.
func (s *Setter) Name() string { return s.name }

// Value computes the new value of the column for a row (aligned with the schema), in
// the datafile package's conventions.
func (s *Setter) Value(row []any) (any, error) {
	v, err := s.e.eval(row)
	if err != nil {
		return nil, withExpr(err, s.src)
	}
	if v == nil && !s.null {
		return nil, withExpr(&Error{Kind: ErrEval, Pos: s.e.pos, Column: s.name, Type: s.t.String(),
			Msg: "[DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NULL for NOT NULL column " + QuoteName(s.name)}, s.src)
	}
	out, err := toRow(s.t, v)
	if err != nil {
		return nil, withExpr(&Error{Kind: ErrEval, Pos: s.e.pos, Column: s.name, Msg: strings.TrimPrefix(err.Error(), "sqlexpr: ")}, s.src)
	}
	return out, nil
}
