package cdctable

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// MovedTag is the tag of a file a compaction wrote, saying where its rows
// came from: a JSON list of Moved, in output order. A writer's key index
// follows them instead of reading the file's rows again (ADR 0034), after a
// restart and in another instance as well as in the process that
// compacted.
const MovedTag = "cdc2delta.moved"

// Moved is one input file's share of a compacted file: the rows of From
// live when it was read (those Read does not delete) are, in order, rows
// Offset to Offset+Live-1 of the tagged file. Rows deleted in From after
// it was read are deleted in the tagged file by its deletion vector.
type Moved struct {
	From   string                   `json:"from"`
	Read   *deltalog.DeletionVector `json:"read,omitempty"`
	Live   int64                    `json:"live"`
	Offset int64                    `json:"offset"`
}

// movedMaxInputs bounds the inputs a tag lists: it is in every snapshot
// and checkpoint of the table while the file lives.
const movedMaxInputs = 512

// MovedTagValue returns the MovedTag value of a file made of moves, and
// false when its inputs are too many to list.
func MovedTagValue(moves []Moved) (string, bool) {
	if len(moves) == 0 || len(moves) > movedMaxInputs {
		return "", false
	}
	js, err := json.Marshal(moves)
	if err != nil {
		return "", false
	}
	return string(js), true
}

// MovedOf returns the moves add's MovedTag lists, nil when it has none.
func MovedOf(add *deltalog.Add) ([]Moved, error) {
	v, ok := add.Tags[MovedTag]
	if !ok {
		return nil, nil
	}
	var moves []Moved
	if err := json.Unmarshal([]byte(v), &moves); err != nil {
		return nil, fmt.Errorf("tag %s of %s: %w", MovedTag, add.Path, err)
	}
	for _, m := range moves {
		if m.From == "" || m.Live <= 0 || m.Offset < 0 {
			return nil, fmt.Errorf("tag %s of %s: bad move %+v", MovedTag, add.Path, m)
		}
	}
	return moves, nil
}

// WithoutMoved returns tags less MovedTag, for a file added again with a
// new deletion vector: the writer that adds it has followed its moves, and
// the tag would otherwise be written again with every commit that touches
// the file.
func WithoutMoved(tags map[string]string) map[string]string {
	if _, ok := tags[MovedTag]; !ok {
		return tags
	}
	out := maps.Clone(tags)
	delete(out, MovedTag)
	return out
}
