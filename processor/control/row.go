package control

import (
	"fmt"
	"time"

	"github.com/cdc2delta/cdc2delta/codecs"
)

// Row is one row of the control table. Zero positions and times are NULL.
type Row struct {
	Kind      string
	Name      string
	TablePath string
	// DeltaVersion is -1 when absent (group rows).
	DeltaVersion          int64
	CompleteThrough       codecs.Position
	CompleteThroughCommit time.Time
	LastApplied           codecs.Position
	LastAppliedCommit     time.Time
	// ScanFrom is -1 when absent.
	ScanFrom       int64
	FinalizedUntil time.Time
	UpdatedAt      time.Time
}

// values renders r aligned with schema().
func (r Row) values() []any {
	pos := func(p codecs.Position) any {
		if p == (codecs.Position{}) {
			return nil
		}
		return p.Hex()
	}
	ts := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().UnixMicro()
	}
	var version, lsn, scan any
	if r.DeltaVersion >= 0 {
		version = r.DeltaVersion
	}
	if r.ScanFrom >= 0 {
		scan = r.ScanFrom
	}
	if text := r.CompleteThrough.CommitText(); text != "" {
		lsn = text
	}
	var path any
	if r.TablePath != "" {
		path = r.TablePath
	}
	return []any{r.Kind, r.Name, path, version, pos(r.CompleteThrough), lsn, ts(r.CompleteThroughCommit),
		pos(r.LastApplied), ts(r.LastAppliedCommit), scan, ts(r.FinalizedUntil), r.UpdatedAt.UTC().UnixMicro()}
}

// rowFrom parses values read back.
func rowFrom(vals []any) (Row, error) {
	str := func(i int) string { s, _ := vals[i].(string); return s }
	pos := func(i int) (codecs.Position, error) {
		if vals[i] == nil {
			return codecs.Position{}, nil
		}
		return codecs.PositionFromHex(str(i))
	}
	ts := func(i int) time.Time {
		us, ok := vals[i].(int64)
		if !ok {
			return time.Time{}
		}
		return time.UnixMicro(us).UTC()
	}
	r := Row{Kind: str(0), Name: str(1), TablePath: str(2), DeltaVersion: -1, ScanFrom: -1,
		CompleteThroughCommit: ts(6), LastAppliedCommit: ts(8), FinalizedUntil: ts(10), UpdatedAt: ts(11)}
	if v, ok := vals[3].(int64); ok {
		r.DeltaVersion = v
	}
	if v, ok := vals[9].(int64); ok {
		r.ScanFrom = v
	}
	var err error
	if r.CompleteThrough, err = pos(4); err != nil {
		return Row{}, fmt.Errorf("row %s %s: %s: %w", r.Kind, r.Name, colCompleteThrough, err)
	}
	if r.LastApplied, err = pos(7); err != nil {
		return Row{}, fmt.Errorf("row %s %s: %s: %w", r.Kind, r.Name, colLastApplied, err)
	}
	return r, nil
}

// ahead merges an update into the stored row: each position and time moves
// forward only. It reports whether anything moved, and whether
// complete_through did.
func ahead(old, upd Row) (Row, bool, bool) {
	out := old
	moved, completed := false, false
	c := upd.CompleteThrough.Compare(old.CompleteThrough)
	if c > 0 {
		out.CompleteThrough, out.CompleteThroughCommit = upd.CompleteThrough, upd.CompleteThroughCommit
		moved, completed = true, true
	}
	// scan_from belongs to the view it was computed in: taken from a view
	// at least as far on, in versions and in completeness.
	if c >= 0 && upd.DeltaVersion >= old.DeltaVersion && upd.ScanFrom != old.ScanFrom {
		out.ScanFrom, moved = upd.ScanFrom, true
	}
	if upd.LastApplied.Compare(old.LastApplied) > 0 {
		out.LastApplied, out.LastAppliedCommit = upd.LastApplied, upd.LastAppliedCommit
		moved = true
	}
	if upd.DeltaVersion > old.DeltaVersion {
		out.DeltaVersion, moved = upd.DeltaVersion, true
	}
	if upd.FinalizedUntil.After(old.FinalizedUntil) {
		out.FinalizedUntil, moved = upd.FinalizedUntil, true
	}
	if upd.TablePath != "" && upd.TablePath != old.TablePath {
		out.TablePath, moved = upd.TablePath, true
	}
	return out, moved, completed
}

// NewestApplied is the newest source commit time applied to any of rows.
func NewestApplied(rows []Row) time.Time {
	var newest time.Time
	for _, r := range rows {
		if r.LastAppliedCommit.After(newest) {
			newest = r.LastAppliedCommit
		}
	}
	return newest
}

// Behind is how far a complete_through (or finalized_until) commit time t is
// behind newest (NewestApplied): never negative, as a table is complete through
// transactions later than its own last change when they did not touch it. It
// reports false when either time is unknown.
func Behind(newest, t time.Time) (time.Duration, bool) {
	if newest.IsZero() || t.IsZero() {
		return 0, false
	}
	return max(newest.Sub(t), 0), true
}
