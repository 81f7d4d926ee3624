package merge

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/cdc2delta/cdc2delta/processor/merge/keyrun"
)

// redirect is where the rows of a moved file went, for the run entries that
// still name it (ADR 0034): row r, unless gone holds it, is row
// offset + r - (gone rows before r) of file to. Runs are never rewritten
// but by a full merge, which follows the redirects and drops them; until
// then a lookup follows them, so that a compaction's or a fold's rows need
// not be read and indexed again.
type redirect struct {
	to, offset, rows uint32
	gone             *roaring.Bitmap
}

// maxRedirects is how many redirects make the next flush merge every run
// (and so drop them): each costs its gone rows in memory and in every
// manifest, and a lookup may follow a chain of them.
const maxRedirects = 1024

// follow returns where loc's row is now, through the redirects of the files
// it moved with; ok is false when the row was gone when its file moved.
func (x *keyIndex) follow(loc rowLoc) (rowLoc, bool) {
	// A file moves after the one it took rows from, so chains end; the
	// bound only keeps a corrupt manifest's cycle from looping.
	for range len(x.redirects) + 1 {
		r := x.redirects[loc.file]
		if r == nil {
			return loc, true
		}
		if loc.row >= r.rows || r.gone.Contains(loc.row) {
			return loc, false
		}
		loc.file, loc.row = r.to, r.offset+loc.row-uint32(r.gone.Rank(loc.row))
	}
	return loc, false
}

// addRedirect records that the run entries of file id now name rows of
// file to, as m moved them. Both ids stay taken while a run may name them
// through the redirect: until a full merge.
func (x *keyIndex) addRedirect(id, to uint32, m fileMove) {
	gone := roaring.New()
	for it := m.gone.Iterator(); it.HasNext(); {
		gone.Add(uint32(it.Next()))
	}
	gone.RunOptimize()
	if x.redirects == nil {
		x.redirects = map[uint32]*redirect{}
	}
	x.redirects[id] = &redirect{to: to, offset: uint32(m.offset), rows: uint32(m.rows), gone: gone}
	x.runs.markInRuns(to)
}

// manifestRedirect is a redirect as a manifest saves it.
type manifestRedirect struct {
	From   uint32 `json:"from"`
	To     uint32 `json:"to"`
	Offset uint32 `json:"offset"`
	Rows   uint32 `json:"rows"`
	// Gone is the roaring bitmap of the rows gone, serialized.
	Gone []byte `json:"gone,omitempty"`
}

func (x *keyIndex) manifestRedirects() ([]manifestRedirect, error) {
	out := make([]manifestRedirect, 0, len(x.redirects))
	for id, r := range x.redirects {
		m := manifestRedirect{From: id, To: r.to, Offset: r.offset, Rows: r.rows}
		if !r.gone.IsEmpty() {
			var err error
			if m.Gone, err = r.gone.ToBytes(); err != nil {
				return nil, err
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// loadRedirects sets the redirects a manifest saved.
func (x *keyIndex) loadRedirects(saved []manifestRedirect) error {
	for _, m := range saved {
		if int(m.From) >= len(x.files) || int(m.To) >= len(x.files) {
			return fmt.Errorf("%w: redirect of file id %d to %d, of %d", keyrun.ErrCorrupt, m.From, m.To, len(x.files))
		}
		gone := roaring.New()
		if len(m.Gone) > 0 {
			if err := gone.UnmarshalBinary(m.Gone); err != nil {
				return fmt.Errorf("%w: redirect of file id %d: %v", keyrun.ErrCorrupt, m.From, err)
			}
		}
		if x.redirects == nil {
			x.redirects = map[uint32]*redirect{}
		}
		x.redirects[m.From] = &redirect{to: m.To, offset: m.Offset, rows: m.Rows, gone: gone}
	}
	return nil
}
