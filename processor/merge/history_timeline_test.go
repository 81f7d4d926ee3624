package merge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
)

func tlPos(n int) codecs.Position {
	var l codecs.LSN
	l[9] = byte(n)
	return codecs.Position{Commit: l, Change: l, Serial: 1}
}

// tlEvent is an event at position n: op c/u/d with name (tracked) and
// note (untracked; "?" is the unavailable placeholder).
func tlEvent(op codecs.Op, n int, name, note string) *hEvent {
	e := &hEvent{op: op, pos: tlPos(n), at: int64(n)}
	if op != codecs.OpDelete && op != codecs.OpTruncate {
		e.vals, e.unavailable = []any{name, note}, []bool{false, note == "?"}
	}
	return e
}

// render writes versions as "name/note[start,end)last".
func (t *timeline) render() string {
	var parts []string
	for _, v := range t.vs {
		end := "∞"
		if v.end != nil {
			end = fmt.Sprint(v.end.Change[9])
		}
		parts = append(parts, fmt.Sprintf("%v/%v[%d,%s)%d", v.vals[0], v.vals[1], v.start.Change[9], end, v.last.Change[9]))
	}
	return strings.Join(parts, " ")
}

// TestTimeline places events, in arrival order, among a key's versions
// (ADR 0046); name is tracked, note is not.
func TestTimeline(t *testing.T) {
	c, u, d := codecs.OpCreate, codecs.OpUpdate, codecs.OpDelete
	tests := []struct {
		name string
		evs  []*hEvent
		want string
	}{
		{"in order", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(u, 2, "b", "x"), tlEvent(d, 3, "", "")}, "a/x[1,2)1 b/x[2,3)2"},
		{"untracked in place", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(u, 2, "a", "y")}, "a/y[1,∞)2"},
		{"re-delivered", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(u, 2, "b", "x"), tlEvent(c, 1, "a", "x"), tlEvent(u, 2, "b", "x")}, "a/x[1,2)1 b/x[2,∞)2"},
		{"placeholder takes the version in force", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(u, 2, "b", "?")}, "a/x[1,2)1 b/x[2,∞)2"},
		{"placeholder in a gap is null", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(d, 2, "", ""), tlEvent(u, 3, "b", "?")}, "a/x[1,2)1 b/<nil>[3,∞)3"},
		{"late update splits", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(u, 5, "c", "x"), tlEvent(u, 3, "b", "x")}, "a/x[1,3)1 b/x[3,5)3 c/x[5,∞)5"},
		{"late update of a deleted key", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(d, 5, "", ""), tlEvent(u, 3, "b", "x")}, "a/x[1,3)1 b/x[3,5)3"},
		{"late delete", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(u, 5, "c", "x"), tlEvent(d, 3, "", "")}, "a/x[1,3)1 c/x[5,∞)5"},
		{"late insert in a gap", []*hEvent{tlEvent(u, 5, "c", "x"), tlEvent(c, 1, "a", "x")}, "a/x[1,5)1 c/x[5,∞)5"},
		{"late insert equal to the next version", []*hEvent{tlEvent(u, 5, "a", "y"), tlEvent(c, 1, "a", "x")}, "a/y[1,∞)5"},
		{"late untracked change before the last", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(u, 5, "a", "z"), tlEvent(u, 3, "a", "y")}, "a/z[1,∞)5"},
		// The history keeps versions, not events: the change at 5 was folded
		// in, so the late change at 3 runs to 5 and the tail keeps a/z.
		{"late tracked change before the last", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(u, 5, "a", "z"), tlEvent(u, 3, "b", "y")}, "a/z[1,3)5 b/y[3,5)3 a/z[5,∞)5"},
		{"late delete before the last", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(u, 5, "a", "z"), tlEvent(d, 3, "", "")}, "a/z[1,3)5 a/z[5,∞)5"},
		{"truncate closes", []*hEvent{tlEvent(c, 1, "a", "x"), tlEvent(codecs.OpTruncate, 2, "", ""), tlEvent(c, 3, "a", "x")}, "a/x[1,2)1 a/x[3,∞)3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := timeline{tracked: []bool{true, false}}
			for _, e := range tc.evs {
				tl.apply(e)
			}
			require.Equal(t, tc.want, tl.render())
		})
	}
}
