package sqlexpr

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Kinds of [Error]; errors.Is(err, ErrSyntax) and so on.
var (
	// ErrSyntax: the text is not an expression.
	ErrSyntax = errors.New("sqlexpr: syntax error")
	// ErrColumn: a column the table does not have, or one that cannot be assigned.
	ErrColumn = errors.New("sqlexpr: bad column")
	// ErrType: operands whose types do not fit the operator, function or column.
	ErrType = errors.New("sqlexpr: type mismatch")
	// ErrUnsupported: valid Spark SQL this package does not evaluate.
	ErrUnsupported = errors.New("sqlexpr: unsupported")
	// ErrEval: a value that cannot be computed (overflow, division by zero, an invalid
	// cast), as Spark's ANSI mode refuses it.
	ErrEval = errors.New("sqlexpr: evaluation error")
)

// Error is a problem at a byte position of an expression. Column and Type name the
// column or the type that does not fit, when there is one.
type Error struct {
	Kind error
	// Pos is the byte offset in Expr where the problem starts.
	Pos int
	Msg string
	// Expr is the expression text, for the caret line.
	Expr   string
	Column string
	Type   string
}

// Error renders the message, the position (1-based character) and, for short
// single-line expressions, the expression with a caret under the position.
func (e *Error) Error() string {
	col := utf8.RuneCountInString(e.Expr[:min(max(e.Pos, 0), len(e.Expr))]) + 1
	s := fmt.Sprintf("%s at character %d", e.Msg, col)
	if e.Expr != "" && len(e.Expr) <= 200 && !strings.ContainsAny(e.Expr, "\n\r") {
		s += "\n  " + e.Expr + "\n  " + strings.Repeat(" ", col-1) + "^"
	}
	return s
}

// Unwrap returns the kind.
func (e *Error) Unwrap() error { return e.Kind }

func errAt(kind error, pos int, format string, args ...any) *Error {
	return &Error{Kind: kind, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// withExpr sets the expression text of an *Error in err.
func withExpr(err error, src string) error {
	var e *Error
	if errors.As(err, &e) && e.Expr == "" {
		e.Expr = src
	}
	return err
}
