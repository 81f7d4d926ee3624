package deltalog

import (
	"fmt"

	"github.com/parquet-go/parquet-go"
)

// rowCols holds one Parquet row split by leaf column: rowCols[i] are the values of leaf
// column i (one value, or one per element for repeated columns).
type rowCols [][]parquet.Value

// split fills rc from row, whose values parquet-go orders by column index.
func (rc *rowCols) split(row parquet.Row, numCols int) {
	if cap(*rc) < numCols {
		*rc = make(rowCols, numCols)
	}
	cols := (*rc)[:numCols]
	for i := range cols {
		cols[i] = nil
	}
	start := 0
	for start < len(row) {
		c := row[start].Column()
		end := start + 1
		for end < len(row) && row[end].Column() == c {
			end++
		}
		if c >= 0 && c < numCols {
			cols[c] = row[start:end]
		}
		start = end
	}
	*rc = cols
}

// groupRef tests whether an optional group (or leaf) is non-null in a row: the first leaf
// below it reaches its definition level.
type groupRef struct{ col, def int }

func (g groupRef) present(rc rowCols) bool {
	if g.col < 0 || len(rc[g.col]) == 0 {
		return false
	}
	return rc[g.col][0].DefinitionLevel() >= g.def
}

// leafRef is a non-repeated leaf column; col is -1 when the file lacks it (reads as null).
type leafRef struct{ col int }

func (l leafRef) value(rc rowCols) (parquet.Value, bool) {
	if l.col < 0 || len(rc[l.col]) == 0 {
		return parquet.Value{}, false
	}
	v := rc[l.col][0]
	return v, !v.IsNull()
}

func (l leafRef) str(rc rowCols) (string, bool) {
	v, ok := l.value(rc)
	if !ok {
		return "", false
	}
	return string(v.ByteArray()), true
}

func (l leafRef) int64(rc rowCols) (int64, bool) {
	v, ok := l.value(rc)
	if !ok {
		return 0, false
	}
	return ckptInt(v), true
}

func (l leafRef) int64Ptr(rc rowCols) *int64 {
	n, ok := l.int64(rc)
	if !ok {
		return nil
	}
	return &n
}

func (l leafRef) boolean(rc rowCols) bool {
	v, ok := l.value(rc)
	return ok && v.Boolean()
}

// ckptInt reads an INT32 or INT64 value; the ckptResolver only accepts those kinds.
func ckptInt(v parquet.Value) int64 {
	if v.Kind() == parquet.Int32 {
		return int64(v.Int32())
	}
	return v.Int64()
}

// mapRef is a MAP<string, string> column.
type mapRef struct {
	present  groupRef
	entryDef int
	key, val leafRef
}

// nullable returns the map with null values as nil pointers; ok is false for a null map.
func (m mapRef) nullable(rc rowCols) (out map[string]*string, ok bool) {
	if !m.present.present(rc) {
		return nil, false
	}
	keys := rc[m.key.col]
	out = make(map[string]*string, len(keys))
	if keys[0].DefinitionLevel() < m.entryDef {
		return out, true
	}
	var vals []parquet.Value
	if m.val.col >= 0 {
		vals = rc[m.val.col]
	}
	for i, k := range keys {
		if k.IsNull() {
			continue
		}
		var vp *string
		if i < len(vals) && !vals[i].IsNull() {
			s := string(vals[i].ByteArray())
			vp = &s
		}
		out[string(k.ByteArray())] = vp
	}
	return out, true
}

// strings returns the map with null values as empty strings; nil for a null map.
func (m mapRef) strings(rc rowCols) map[string]string {
	nm, ok := m.nullable(rc)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(nm))
	for k, v := range nm {
		if v != nil {
			out[k] = *v
		} else {
			out[k] = ""
		}
	}
	return out
}

// listRef is a LIST<string> column.
type listRef struct {
	present  groupRef
	entryDef int
	elem     leafRef
}

// strings returns the list; nil for a null list, non-nil and empty for an empty one.
// Null elements are dropped: no list the checkpoint holds allows them.
func (l listRef) strings(rc rowCols) []string {
	if !l.present.present(rc) {
		return nil
	}
	vals := rc[l.elem.col]
	out := make([]string, 0, len(vals))
	if vals[0].DefinitionLevel() < l.entryDef {
		return out
	}
	for _, v := range vals {
		if !v.IsNull() {
			out = append(out, string(v.ByteArray()))
		}
	}
	return out
}

// ckptResolver builds refs from a file layout, collecting the first type mismatch so a file
// whose known columns have foreign types is rejected rather than misread.
type ckptResolver struct{ err error }

func (r *ckptResolver) fail(n *colNode, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("checkpoint column %v has an unexpected type (want %s)", n.node, want)
	}
}

func (r *ckptResolver) group(n *colNode) groupRef {
	if n == nil || n.first == n.end {
		return groupRef{col: -1}
	}
	return groupRef{col: n.first, def: n.def}
}

func (r *ckptResolver) leafOf(n *colNode, want string, kinds ...parquet.Kind) leafRef {
	if n == nil {
		return leafRef{col: -1}
	}
	if !n.leaf() || n.rep != 0 {
		r.fail(n, want)
		return leafRef{col: -1}
	}
	k := n.node.Type().Kind()
	for _, want := range kinds {
		if k == want {
			return leafRef{col: n.first}
		}
	}
	r.fail(n, want)
	return leafRef{col: -1}
}

func (r *ckptResolver) str(n *colNode) leafRef { return r.leafOf(n, "string", parquet.ByteArray) }
func (r *ckptResolver) int(n *colNode) leafRef {
	return r.leafOf(n, "integer", parquet.Int32, parquet.Int64)
}
func (r *ckptResolver) boolean(n *colNode) leafRef { return r.leafOf(n, "boolean", parquet.Boolean) }

// repeatedLeaf accepts a leaf inside exactly one repeated level (a list element, map key
// or value) of the given kind.
func (r *ckptResolver) repeatedLeaf(n *colNode, want string, kind parquet.Kind) leafRef {
	if n == nil {
		return leafRef{col: -1}
	}
	if !n.leaf() || n.rep != 1 || n.node.Type().Kind() != kind {
		r.fail(n, want)
		return leafRef{col: -1}
	}
	return leafRef{col: n.first}
}

func (r *ckptResolver) stringMap(n *colNode) mapRef {
	m := mapRef{present: groupRef{col: -1}, key: leafRef{col: -1}, val: leafRef{col: -1}}
	if n == nil {
		return m
	}
	kv := n.repeatedChild()
	if kv == nil || n.rep != 0 || len(kv.children) != 2 {
		r.fail(n, "map<string,string>")
		return m
	}
	key, val := kv.child("key"), kv.child("value")
	if key == nil || val == nil {
		key, val = kv.children[0], kv.children[1]
	}
	m.key = r.repeatedLeaf(key, "map<string,string> key", parquet.ByteArray)
	m.val = r.repeatedLeaf(val, "map<string,string> value", parquet.ByteArray)
	if m.key.col < 0 {
		return m
	}
	m.present = groupRef{col: m.key.col, def: n.def}
	m.entryDef = kv.def
	return m
}

func (r *ckptResolver) stringList(n *colNode) listRef {
	l := listRef{present: groupRef{col: -1}, elem: leafRef{col: -1}}
	if n == nil {
		return l
	}
	rep := n.repeatedChild()
	if rep == nil || n.rep != 0 {
		r.fail(n, "list<string>")
		return l
	}
	elem := rep
	if !rep.leaf() {
		// Standard three-level list: the repeated group holds one element field.
		if len(rep.children) != 1 {
			r.fail(n, "list<string>")
			return l
		}
		elem = rep.children[0]
	}
	l.elem = r.repeatedLeaf(elem, "list<string> element", parquet.ByteArray)
	if l.elem.col < 0 {
		return l
	}
	l.present = groupRef{col: l.elem.col, def: n.def}
	l.entryDef = rep.def
	return l
}
