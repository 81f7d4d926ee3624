package merge

import (
	"context"
	"fmt"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// indexCheck compares a pipeline's on-disk key index with the live rows
// VerifyTable reads, in batches of lookups.
type indexCheck struct {
	x     *keyIndex
	check *liveCheck
	batch []indexWant
}

// indexWant is a live key and the row the index must point it at.
type indexWant struct {
	key, show, file string
	row             int64
}

const indexCheckBatch = 4096

// openIndexCheck opens the newest manifest in dir at or below st's
// version and catches it up to st, as a starting pipeline does.
func openIndexCheck(ctx context.Context, store deltalog.Store, st *tableState, dir string) (*indexCheck, error) {
	d := &indexDir{path: dir}
	_, m, err := newestManifest(dir, st.snap.Version())
	if err != nil {
		return nil, fmt.Errorf("key index in %s: %w", dir, err)
	}
	x, err := indexFromManifest(ctx, store, st, &indexRuns{indexDir: d}, m, func(string, ...any) {})
	if err != nil {
		return nil, fmt.Errorf("key index in %s: %w", dir, err)
	}
	return &indexCheck{x: x, check: liveCheckOf(ctx, x, store, st.snap)}, nil
}

func (c *indexCheck) close() { c.x.close() }

// want queues a live key; a full batch is looked up.
func (c *indexCheck) want(key, show, file string, row int64, problem func(Problem)) error {
	c.batch = append(c.batch, indexWant{key, show, file, row})
	if len(c.batch) < indexCheckBatch {
		return nil
	}
	return c.flush(problem)
}

func (c *indexCheck) flush(problem func(Problem)) error {
	keys := make([]string, len(c.batch))
	for i, w := range c.batch {
		keys[i] = w.key
	}
	locs, found, err := c.x.lookup(keys, c.check)
	if err != nil {
		return fmt.Errorf("looking up the key index: %w", err)
	}
	for i, w := range c.batch {
		switch {
		case !found[i]:
			problem(Problem{Kind: ProblemKeyIndex, File: w.file, Row: w.row, Key: w.show, Msg: "live row missing from the key index"})
		case c.x.files[locs[i].file] != w.file || int64(locs[i].row) != w.row:
			problem(Problem{Kind: ProblemKeyIndex, File: w.file, Row: w.row, Key: w.show,
				Msg: fmt.Sprintf("the key index points at file %s row %d", c.x.files[locs[i].file], locs[i].row)})
		}
	}
	c.batch = c.batch[:0]
	return nil
}

// finish looks up what is queued and counts the index's live keys, which
// must be the unique live keys of the table.
func (c *indexCheck) finish(unique int64, problem func(Problem)) error {
	if err := c.flush(problem); err != nil {
		return err
	}
	var n int64
	if err := c.x.allLive(c.check, func(string, rowLoc) error { n++; return nil }); err != nil {
		return fmt.Errorf("reading the key index: %w", err)
	}
	if n != unique {
		problem(Problem{Kind: ProblemKeyIndex, Row: -1, Msg: fmt.Sprintf("holds %d live keys, the table has %d", n, unique)})
	}
	return nil
}
