package keyrun

// Iter walks a run's entries in key order.
//
//	it := run.Iter()
//	for it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if err := it.Err(); err != nil { … }
type Iter struct {
	run   *Run
	block int
	buf   []byte
	c     cursor
	err   error
}

// Iter returns an iterator before the run's first entry.
func (r *Run) Iter() *Iter { return &Iter{run: r, block: -1} }

// Next moves to the next entry and reports whether there is one.
func (it *Iter) Next() bool {
	if it.err != nil {
		return false
	}
	if it.block >= 0 {
		if it.err = it.c.next(); it.err != nil {
			return false
		}
	}
	for !it.c.ok {
		if it.block++; it.block >= it.run.Blocks() {
			return false
		}
		body, err := it.run.readBlock(it.block, it.buf)
		if err != nil {
			it.err = err
			return false
		}
		it.buf = body
		if it.c, it.err = newCursor(body, it.run.width, it.run.blockAt[it.block]); it.err != nil {
			return false
		}
	}
	return true
}

// Key is the current key, valid until the next call to Next.
func (it *Iter) Key() []byte { return it.c.key }

// Value is the current value, valid until the next call to Next.
func (it *Iter) Value() []byte { return it.c.value }

// Err is the error that ended the iteration, if any.
func (it *Iter) Err() error { return it.err }
