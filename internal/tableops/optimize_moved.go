package tableops

import (
	"maps"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Moved is where a compaction put one input file's rows, for a writer that
// indexes rows by file and row (a key index): the rows live when the file
// was read, those Read does not delete, are in their order rows Offset to
// Offset+Live-1 of To. Rows deleted in the input after it was read are
// deleted in To as well, by To's deletion vector.
type Moved struct {
	From string
	// Read is the deletion vector From was read with; nil: none.
	Read   *deltalog.DeletionVector
	Live   int64
	To     string
	Offset int64
}

// moved lists the inputs of bins whose rows went, unsorted, into a single
// output the commit adds. A sorted bin, or one written into several files,
// moves none: a writer then indexes its outputs' rows again.
func moved(bins []*compacted) []Moved {
	var out []Moved
	for _, b := range bins {
		if b.sorted || len(b.outputs) != 1 || b.empty(0) {
			continue
		}
		var offset int64
		for i, in := range b.inputs {
			// A dropped input's rows were written too, and are deleted in
			// the output: they still take their rows.
			if !b.dropped[i] && b.live[i] > 0 {
				out = append(out, Moved{From: in.Path, Read: b.read[i], Live: b.live[i], To: b.outputs[0].Path, Offset: offset})
			}
			offset += b.live[i]
		}
	}
	return out
}

// tagMoved sets the tags tags gives each output of bins from its moves (a
// rebase runs it again, as the moves may have changed).
func tagMoved(bins []*compacted, moves []Moved, tags func([]Moved) map[string]string) {
	by := map[string][]Moved{}
	for _, m := range moves {
		by[m.To] = append(by[m.To], m)
	}
	for _, b := range bins {
		for j := range b.outputs {
			out := &b.outputs[j]
			if len(by[out.Path]) == 0 {
				continue
			}
			add := tags(by[out.Path])
			if len(add) == 0 {
				continue
			}
			out.Tags = maps.Clone(out.Tags)
			if out.Tags == nil {
				out.Tags = map[string]string{}
			}
			maps.Copy(out.Tags, add)
		}
	}
}
