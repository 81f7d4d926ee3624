package keyrun

import "encoding/binary"

// cursor walks the entries of one block. When ok, key and value are the
// current entry's; key is owned by the cursor, value aliases the block.
type cursor struct {
	rest  []byte
	width int
	at    int64 // the block's offset, for errors
	key   []byte
	value []byte
	ok    bool
	first bool // the next entry is the block's first
}

// newCursor returns a cursor on the first entry of body.
func newCursor(body []byte, width int, at int64) (cursor, error) {
	c := cursor{rest: body, width: width, at: at, first: true}
	err := c.next()
	return c, err
}

// next moves to the next entry; ok turns false after the last.
func (c *cursor) next() error {
	if len(c.rest) == 0 {
		c.ok = false
		return nil
	}
	shared, n := binary.Uvarint(c.rest)
	if n <= 0 {
		return c.corrupt("entry header cut short")
	}
	rest, m := binary.Uvarint(c.rest[n:])
	if m <= 0 {
		return c.corrupt("entry header cut short")
	}
	body := c.rest[n+m:]
	switch {
	case c.first && shared != 0:
		return c.corrupt("a block's first key shares a prefix")
	case shared > uint64(len(c.key)):
		return c.corrupt("shared prefix longer than the key before it")
	case rest > uint64(len(body)) || uint64(len(body))-rest < uint64(c.width):
		return c.corrupt("entry runs past the block")
	}
	c.key = append(c.key[:shared], body[:rest]...)
	c.value = body[rest : rest+uint64(c.width)]
	c.rest = body[rest+uint64(c.width):]
	c.ok, c.first = true, false
	return nil
}

func (c *cursor) corrupt(reason string) error {
	return &CorruptError{Part: "block", Offset: c.at, Reason: reason}
}
