package cdctable

import (
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// FileOwners says which files a writer may fold into its tail or compact,
// by the PartitionsTag of the files: writers sharing a table touch disjoint
// files (ADR 0036).
type FileOwners struct {
	owned map[string]bool // the writer's partitions, as in PartitionsTag
	// sole: the writer owns every partition the table holds offsets of, so
	// no other writer folds files and every file may be folded.
	sole bool
	// batch are the partitions of the batch's records, and Rows the tag of
	// a file of its new rows.
	batch map[string]bool
	Rows  string
}

// NewFileOwners derives the owners from the writer's partitions (owned; nil:
// the batch's), the partitions of the batch (batch: its last offsets; recs:
// those of its records, nil for none) and those the table holds offsets of.
func NewFileOwners(owned []TopicPartition, batch map[TopicPartition]int64, recs iter.Seq[TopicPartition], applied map[TopicPartition]int64) FileOwners {
	o := FileOwners{owned: map[string]bool{}, sole: true}
	for _, tp := range owned {
		o.owned[tp.TagName()] = true
	}
	for tp := range batch {
		o.owned[tp.TagName()] = true
	}
	for tp := range applied {
		o.sole = o.sole && o.owned[tp.TagName()]
	}
	o.batch = map[string]bool{}
	if recs != nil {
		for tp := range recs {
			o.batch[tp.TagName()] = true
		}
	}
	o.Rows = joinTag(o.batch)
	return o
}

func joinTag(parts map[string]bool) string {
	names := make([]string, 0, len(parts))
	for p := range parts {
		names = append(names, p)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// MayFold reports whether the writer may fold f into its tail.
func (o FileOwners) MayFold(f *deltalog.Add) bool {
	all, _ := o.overlap(f)
	return o.sole || all
}

// overlap reports whether every and whether some of the partitions f's tag
// names are the writer's; both are false for an untagged file.
func (o FileOwners) overlap(f *deltalog.Add) (all, some bool) {
	tag := f.Tags[PartitionsTag]
	if tag == "" {
		return false, false
	}
	all = true
	for p := range strings.SplitSeq(tag, ",") {
		all, some = all && o.owned[p], some || o.owned[p]
	}
	return all, some
}

// FoldedTag is the tag of a file holding the batch's new rows and the rows
// of folded; an untagged one (which only a sole writer folds) may hold rows
// of any of its partitions.
func (o FileOwners) FoldedTag(folded []*deltalog.Add) string {
	parts := maps.Clone(o.batch)
	for _, f := range folded {
		tag := f.Tags[PartitionsTag]
		if tag == "" {
			return joinTag(o.owned)
		}
		for p := range strings.SplitSeq(tag, ",") {
			parts[p] = true
		}
	}
	return joinTag(parts)
}

// Tag sets add's partitions tag.
func Tag(add *deltalog.Add, partitions string) {
	if partitions == "" {
		return
	}
	tags := maps.Clone(add.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tags[PartitionsTag] = partitions
	add.Tags = tags
}

// Compacts returns which of snap's files a writer of the partitions owned
// compacts, so that writers sharing a table compact disjoint files: its own
// (tagged with its partitions only) and, when it owns the table's first
// partition, the files of no one writer (untagged, or tagged with some of
// its partitions and others). A sole writer compacts every file.
func Compacts(owned []TopicPartition, snap *deltalog.Snapshot) func(*deltalog.Add) bool {
	applied := Offsets(snap)
	o := NewFileOwners(owned, nil, nil, applied)
	first := ""
	for tp := range applied {
		if n := tp.TagName(); first == "" || n < first {
			first = n
		}
	}
	leader := first == "" || o.owned[first]
	return func(f *deltalog.Add) bool {
		all, some := o.overlap(f)
		return o.sole || all || leader && (some || f.Tags[PartitionsTag] == "")
	}
}
