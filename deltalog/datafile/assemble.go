package datafile

import "github.com/RoaringBitmap/roaring/v2/roaring64"

// assemble rebuilds rows from the decoded columns (Dremel record assembly): for each row
// every leaf has a range [lo, hi) of values; nested nodes split the ranges of their
// leaves into elements where the repetition level drops to their own.
// dropped, when set, is deleted as a rowSet.
func assemble(top []*rnode, leaves []*leafReader, numRows int64, deleted *roaring64.Bitmap, dropped rowSet) [][]any {
	a := assembler{leaves: leaves, lo: make([]int, len(leaves)), hi: make([]int, len(leaves))}
	live := numRows
	if deleted != nil {
		live -= int64(deleted.GetCardinality())
	}
	rows := make([][]any, 0, max(live, 0))
	for i := range int(numRows) {
		if dropped != nil && dropped.has(i) || dropped == nil && deleted != nil && deleted.Contains(uint64(i)) {
			continue
		}
		for j, l := range leaves {
			if l.starts == nil {
				a.lo[j], a.hi[j] = i, i+1
			} else {
				a.lo[j], a.hi[j] = l.starts[i], l.starts[i+1]
			}
		}
		row := make([]any, len(top))
		for j, n := range top {
			row[j] = a.value(n)
		}
		rows = append(rows, row)
	}
	return rows
}

type assembler struct {
	leaves []*leafReader
	lo, hi []int
}

// value assembles node n from the current ranges of its leaves.
func (a *assembler) value(n *rnode) any {
	switch n.kind {
	case nodeNull:
		return nil
	case nodeConst:
		return n.constVal
	case nodeLeaf:
		if a.lo[n.leaf] >= a.hi[n.leaf] {
			return nil
		}
		return a.leaves[n.leaf].vals[a.lo[n.leaf]]
	}
	p := a.leaves[n.probe]
	if a.lo[n.probe] >= a.hi[n.probe] || int(p.def[a.lo[n.probe]]) < n.def {
		return nil
	}
	if n.kind == nodeStruct {
		out := make([]any, len(n.children))
		for i, c := range n.children {
			out[i] = a.value(c)
		}
		return out
	}
	empty := int(p.def[a.lo[n.probe]]) < n.repDef
	var items []any
	var kvs []KV
	if n.kind == nodeMap {
		kvs = []KV{}
	} else {
		items = []any{}
	}
	if !empty {
		// cur and end track this node's leaves; nested nodes overwrite lo/hi.
		cur := make([]int, len(n.subtree))
		end := make([]int, len(n.subtree))
		for k, l := range n.subtree {
			cur[k], end[k] = a.lo[l], a.hi[l]
		}
		probeK := indexOf(n.subtree, n.probe)
		for cur[probeK] < end[probeK] {
			for k, l := range n.subtree {
				e := cur[k] + 1
				rep := a.leaves[l].rep
				for e < end[k] && int(rep[e]) > n.rep {
					e++
				}
				a.lo[l], a.hi[l] = cur[k], e
				cur[k] = e
			}
			if n.kind == nodeMap {
				kv := KV{Key: a.value(n.children[0])}
				kv.Value = a.value(n.children[1])
				kvs = append(kvs, kv)
			} else {
				items = append(items, a.value(n.children[0]))
			}
		}
	}
	if n.kind == nodeMap {
		return kvs
	}
	return items
}

func indexOf(s []int, x int) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return 0
}
