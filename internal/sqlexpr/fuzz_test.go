package sqlexpr

import (
	"errors"
	"testing"
)

// FuzzExpressions: any text binds or fails with an *Error, and a bound predicate or
// assignment evaluates or fails with an *Error; nothing panics.
//
//	go test -run '^$' -fuzz FuzzExpressions ./internal/sqlexpr/
func FuzzExpressions(f *testing.F) {
	for _, s := range []string{
		"position > 10", "position <= 10 AND points = 0", "`Unit Price` BETWEEN 1.5 AND 2",
		"name LIKE 'a\\%%' ESCAPE '\\\\'", "CASE WHEN position IS NULL THEN 0 ELSE 11 - position END",
		"CAST(name AS DECIMAL(38,10)) > 1e3", "COALESCE(points, 0D) / 0 > 1", "day = DATE '2024-02-29'",
		"at < TIMESTAMP '2024-01-01 00:00:00+05:30'", "raw = X'ABC'", "position IN (1, NULL, '2')",
		"points = 11 - position, name = concat(name, '!')", "((((((1))))))", "-9223372036854775808L",
		"99999999999999999999999999999999999999 * 10", "small * small > 0", "abs(-small) = 1",
	} {
		f.Add(s)
	}
	rows := [][]any{
		{int64(7), int32(12), 0.5, "Max", dec("12.50"), int32(19783), int64(1), int8(100), []byte{1, 2}, true},
		{int64(-1), nil, nil, nil, nil, nil, nil, nil, nil, nil},
	}
	typed := func(t *testing.T, err error) {
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		if e != nil {
			_ = e.Error()
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1000 {
			return
		}
		if p, err := BindPredicate(s, testSchema()); err == nil {
			_ = p.SQL()
			for _, r := range rows {
				_, err := p.Matches(r)
				typed(t, err)
			}
			_ = p.MayMatch(FileStats{NumRecords: 2, NullCount: map[int]int64{1: 1}})
		} else {
			typed(t, err)
		}
		ss, err := BindAssignments(s, testSchema(), SetterOptions{})
		typed(t, err)
		for _, st := range ss {
			for _, r := range rows {
				_, err := st.Value(r)
				typed(t, err)
			}
		}
	})
}
