package deltalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Field metadata keys of column mapping.
const (
	MetaColumnMappingID           = "delta.columnMapping.id"
	MetaColumnMappingPhysicalName = "delta.columnMapping.physicalName"
)

// NeedsColumnMapping reports whether Delta refuses name as a column name unless column
// mapping is enabled (Spark rejects " ,;{}()\n\t=" in Parquet column names).
func NeedsColumnMapping(name string) bool {
	return strings.ContainsAny(name, " ,;{}()\n\t=")
}

// ColumnMappingMode returns the table's column mapping mode: "none", "name" or "id".
func ColumnMappingMode(meta *Metadata) string {
	if meta == nil {
		return "none"
	}
	switch m := meta.Configuration[PropColumnMappingMode]; m {
	case "":
		return "none"
	default:
		return m
	}
}

// ColumnID returns the field's delta.columnMapping.id, if it has a valid one.
func ColumnID(f StructField) (int64, bool) {
	return metaInt(f.Metadata[MetaColumnMappingID])
}

// PhysicalName returns the name data files use for the field: its
// delta.columnMapping.physicalName, or its logical name without column mapping.
func PhysicalName(f StructField) string {
	if s, ok := f.Metadata[MetaColumnMappingPhysicalName].(string); ok && s != "" {
		return s
	}
	return f.Name
}

func metaInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}

// AssignColumnMapping returns a copy of st in which every field, nested ones included,
// has a column mapping id and physical name. Fields that already have them keep them; new
// ids continue after maxColumnID. It returns the new maximum, to store in
// delta.columnMapping.maxColumnId. Adding columns later uses the same call.
func AssignColumnMapping(st *StructType, maxColumnID int64) (*StructType, int64) {
	out := CloneType(st).(*StructType)
	// Respect ids already present even if maxColumnID is stale, so none is ever reused.
	walkFields(out, "", func(_ string, f *StructField) bool {
		if id, ok := ColumnID(*f); ok && id > maxColumnID {
			maxColumnID = id
		}
		return true
	})
	walkFields(out, "", func(_ string, f *StructField) bool {
		if f.Metadata == nil {
			f.Metadata = map[string]any{}
		}
		if _, ok := ColumnID(*f); !ok {
			maxColumnID++
			f.Metadata[MetaColumnMappingID] = maxColumnID
		}
		if s, ok := f.Metadata[MetaColumnMappingPhysicalName].(string); !ok || s == "" {
			f.Metadata[MetaColumnMappingPhysicalName] = "col-" + uuid.NewString()
		}
		return true
	})
	return out, maxColumnID
}

// MaxColumnID reads delta.columnMapping.maxColumnId from table properties (0 if unset).
func MaxColumnID(config map[string]string) int64 {
	n, err := strconv.ParseInt(config[PropColumnMappingMaxID], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// PhysicalSchema returns a copy of st with every field renamed to its physical name; it is
// the schema data files are written with. Metadata is kept so writers can set field ids.
func PhysicalSchema(st *StructType) *StructType {
	out := CloneType(st).(*StructType)
	walkFields(out, "", func(_ string, f *StructField) bool {
		f.Name = PhysicalName(*f)
		return true
	})
	return out
}

// ToPhysical maps a logical column path (top-level name first) to the physical path.
// Names match exactly, or else case-insensitively, as Delta names are case-insensitive.
func ToPhysical(st *StructType, logical []string) ([]string, error) {
	return mapPath(st, logical, func(f StructField) string { return f.Name }, PhysicalName)
}

// ToLogical maps a physical column path (as in data files and stats) to the logical path.
func ToLogical(st *StructType, physical []string) ([]string, error) {
	return mapPath(st, physical, PhysicalName, func(f StructField) string { return f.Name })
}

func mapPath(st *StructType, path []string, from, to func(StructField) string) ([]string, error) {
	out := make([]string, 0, len(path))
	var cur Type = st
	for i, name := range path {
		switch t := cur.(type) {
		case *StructType:
			f, ok := findField(t, name, from)
			if !ok {
				return nil, fmt.Errorf("deltalog: no column %q", strings.Join(path[:i+1], "."))
			}
			out = append(out, to(f))
			cur = f.Type
		case *ArrayType:
			if name != "element" {
				return nil, fmt.Errorf("deltalog: no column %q", strings.Join(path[:i+1], "."))
			}
			out = append(out, name)
			cur = t.ElementType
		case *MapType:
			switch name {
			case "key":
				cur = t.KeyType
			case "value":
				cur = t.ValueType
			default:
				return nil, fmt.Errorf("deltalog: no column %q", strings.Join(path[:i+1], "."))
			}
			out = append(out, name)
		default:
			return nil, fmt.Errorf("deltalog: column %q is not nested", strings.Join(path[:i], "."))
		}
	}
	return out, nil
}

func findField(st *StructType, name string, key func(StructField) string) (StructField, bool) {
	for _, f := range st.Fields {
		if key(f) == name {
			return f, true
		}
	}
	for _, f := range st.Fields {
		if strings.EqualFold(key(f), name) {
			return f, true
		}
	}
	return StructField{}, false
}

// Field returns the top-level field with the given logical name (exact, else
// case-insensitive match).
func (st *StructType) Field(name string) (StructField, bool) {
	return findField(st, name, func(f StructField) string { return f.Name })
}

// CloneType deep-copies a type, including field metadata maps (metadata values are shared;
// they are JSON values and treated as immutable).
func CloneType(t Type) Type {
	switch t := t.(type) {
	case *StructType:
		if t == nil {
			return t
		}
		out := &StructType{Fields: make([]StructField, len(t.Fields))}
		for i, f := range t.Fields {
			out.Fields[i] = StructField{Name: f.Name, Type: CloneType(f.Type), Nullable: f.Nullable, Metadata: maps.Clone(f.Metadata)}
		}
		return out
	case *ArrayType:
		if t == nil {
			return t
		}
		return &ArrayType{ElementType: CloneType(t.ElementType), ContainsNull: t.ContainsNull}
	case *MapType:
		if t == nil {
			return t
		}
		return &MapType{KeyType: CloneType(t.KeyType), ValueType: CloneType(t.ValueType), ValueContainsNull: t.ValueContainsNull}
	}
	return t
}

// MapColumnsAsNamed returns a copy of st for enabling column mapping on a table that has
// data: every field gets an id after maxColumnID and keeps its logical name as physical
// name, since the data files already use it (Spark does the same). It returns the new
// maximum column id.
func MapColumnsAsNamed(st *StructType, maxColumnID int64) (*StructType, int64) {
	out := CloneType(st).(*StructType)
	walkFields(out, "", func(_ string, f *StructField) bool {
		if f.Metadata == nil {
			f.Metadata = map[string]any{}
		}
		if s, ok := f.Metadata[MetaColumnMappingPhysicalName].(string); !ok || s == "" {
			f.Metadata[MetaColumnMappingPhysicalName] = f.Name
		}
		return true
	})
	return AssignColumnMapping(out, maxColumnID)
}
