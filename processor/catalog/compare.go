package catalog

import (
	"maps"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Column is one column as every catalog can record it: its name, its
// HiveType and its comment. Entries are compared column by column in this
// form, which every catalog keeps, so that a catalog with fewer types
// (Glue, Hive: no timestamp_ntz) does not look changed on every commit.
type Column struct {
	Name, Type, Comment string
}

// Columns are s's top-level columns as catalogs record them.
func Columns(s *deltalog.StructType) []Column {
	if s == nil {
		return nil
	}
	out := make([]Column, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = Column{Name: f.Name, Type: HiveType(f.Type), Comment: Comment(f)}
	}
	return out
}

// Comment is a field's comment (its "comment" metadata), or "".
func Comment(f deltalog.StructField) string {
	c, _ := f.Metadata["comment"].(string)
	return c
}

// SameLocation reports whether two table locations name the same
// directory: trailing slashes and s3a:// against s3:// do not count.
func SameLocation(a, b string) bool { return normLocation(a) == normLocation(b) }

func normLocation(l string) string {
	l = strings.TrimRight(l, "/")
	for _, p := range []string{"s3a://", "s3n://"} {
		if rest, ok := strings.CutPrefix(l, p); ok {
			l = "s3://" + rest
		}
	}
	if rest, ok := strings.CutPrefix(l, "file:///"); ok {
		l = "file:/" + rest
	}
	return l
}

// Differences lists what got (an entry as looked up) lacks of want (the
// entry the table's log gives): "schema", "description", "partitioning",
// "properties". Columns compare as Columns does; properties of got that want
// does not set (the catalog's own, an owner's tags) are kept and ignored.
// None: the entry is up to date and must not be updated.
func Differences(want, got Entry) []string {
	var out []string
	if !slices.Equal(Columns(want.Schema), Columns(got.Schema)) {
		out = append(out, "schema")
	}
	if want.Description != got.Description {
		out = append(out, "description")
	}
	if !slices.Equal(want.PartitionColumns, got.PartitionColumns) && (len(want.PartitionColumns) > 0 || len(got.PartitionColumns) > 0) {
		out = append(out, "partitioning")
	}
	for _, k := range slices.Sorted(maps.Keys(want.Properties)) {
		if v, ok := got.Properties[k]; !ok || v != want.Properties[k] {
			out = append(out, "properties")
			break
		}
	}
	return out
}
