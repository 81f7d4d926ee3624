package unity

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// columnInfo is the API's ColumnInfo.
type columnInfo struct {
	Name           string `json:"name"`
	TypeText       string `json:"type_text"`
	TypeJSON       string `json:"type_json"`
	TypeName       string `json:"type_name"`
	TypePrecision  *int   `json:"type_precision,omitempty"`
	TypeScale      *int   `json:"type_scale,omitempty"`
	Position       int    `json:"position"`
	Comment        string `json:"comment,omitempty"`
	Nullable       bool   `json:"nullable"`
	PartitionIndex *int   `json:"partition_index,omitempty"`
}

// createTable is the API's CreateTable.
type createTable struct {
	Name             string            `json:"name"`
	CatalogName      string            `json:"catalog_name"`
	SchemaName       string            `json:"schema_name"`
	TableType        string            `json:"table_type"`
	DataSourceFormat string            `json:"data_source_format"`
	Columns          []columnInfo      `json:"columns"`
	StorageLocation  string            `json:"storage_location"`
	Comment          string            `json:"comment,omitempty"`
	Properties       map[string]string `json:"properties,omitempty"`
}

// tableInfo is the part of the API's TableInfo an entry reads.
type tableInfo struct {
	Name             string            `json:"name"`
	CatalogName      string            `json:"catalog_name"`
	SchemaName       string            `json:"schema_name"`
	TableType        string            `json:"table_type"`
	DataSourceFormat string            `json:"data_source_format"`
	Columns          []columnInfo      `json:"columns"`
	StorageLocation  string            `json:"storage_location"`
	Comment          string            `json:"comment"`
	Properties       map[string]string `json:"properties"`
}

func createRequest(e catalog.Entry) (createTable, error) {
	cols, err := columns(e.Schema, e.PartitionColumns)
	if err != nil {
		return createTable{}, err
	}
	return createTable{
		Name: e.Name.Table, CatalogName: e.Name.Catalog, SchemaName: e.Name.Schema,
		TableType: "EXTERNAL", DataSourceFormat: "DELTA", Columns: cols,
		StorageLocation: e.Location, Comment: e.Description, Properties: e.Properties,
	}, nil
}

// columns are the schema's top-level fields as ColumnInfo: type_json is the
// field as the Delta log writes it.
func columns(s *deltalog.StructType, partitions []string) ([]columnInfo, error) {
	if s == nil {
		return []columnInfo{}, nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding the schema: %w", err)
	}
	var fields struct {
		Fields []json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal(raw, &fields); err != nil || len(fields.Fields) != len(s.Fields) {
		return nil, fmt.Errorf("encoding the schema: %v", err)
	}
	out := make([]columnInfo, len(s.Fields))
	for i, f := range s.Fields {
		c := columnInfo{Name: f.Name, TypeText: typeText(f.Type), TypeJSON: string(fields.Fields[i]), TypeName: typeName(f.Type),
			Position: i, Comment: catalog.Comment(f), Nullable: f.Nullable}
		if d, ok := f.Type.(deltalog.DecimalType); ok {
			c.TypePrecision, c.TypeScale = &d.Precision, &d.Scale
		}
		if j := slices.Index(partitions, f.Name); j >= 0 {
			c.PartitionIndex = &j
		}
		out[i] = c
	}
	return out, nil
}

// typeName is the API's ColumnTypeName of t.
func typeName(t deltalog.Type) string {
	switch t := t.(type) {
	case deltalog.PrimitiveType:
		switch t {
		case deltalog.TypeInteger:
			return "INT"
		case deltalog.TypeLong:
			return "LONG"
		}
		return strings.ToUpper(string(t))
	case deltalog.DecimalType:
		return "DECIMAL"
	case *deltalog.ArrayType:
		return "ARRAY"
	case *deltalog.MapType:
		return "MAP"
	case *deltalog.StructType:
		return "STRUCT"
	}
	return "USER_DEFINED_TYPE"
}

// typeText is t as Spark's catalogString writes it.
func typeText(t deltalog.Type) string {
	switch t := t.(type) {
	case deltalog.PrimitiveType:
		if t == deltalog.TypeTimestampNTZ {
			return "timestamp_ntz"
		}
		return catalog.HiveType(t)
	case *deltalog.ArrayType:
		return "array<" + typeText(t.ElementType) + ">"
	case *deltalog.MapType:
		return "map<" + typeText(t.KeyType) + "," + typeText(t.ValueType) + ">"
	case *deltalog.StructType:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + ":" + typeText(f.Type)
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	}
	return catalog.HiveType(t)
}

// entryOf reads a table back into an entry; the schema comes from the
// columns' type_json.
func entryOf(n catalog.Name, t tableInfo) (catalog.Entry, error) {
	e := catalog.Entry{Name: n, Location: t.StorageLocation, Description: t.Comment, Properties: t.Properties,
		Format: strings.ToLower(t.DataSourceFormat)}
	if e.Format == "" {
		e.Format = "unknown"
	}
	cols := slices.Clone(t.Columns)
	slices.SortStableFunc(cols, func(a, b columnInfo) int { return a.Position - b.Position })
	fields := make([]json.RawMessage, 0, len(cols))
	type part struct {
		name string
		idx  int
	}
	var parts []part
	for _, c := range cols {
		if c.TypeJSON == "" {
			return e, fmt.Errorf("column %s has no type_json", c.Name)
		}
		fields = append(fields, json.RawMessage(c.TypeJSON))
		if c.PartitionIndex != nil {
			parts = append(parts, part{c.Name, *c.PartitionIndex})
		}
	}
	if len(fields) > 0 {
		raw, err := json.Marshal(map[string]any{"type": "struct", "fields": fields})
		if err != nil {
			return e, err
		}
		if e.Schema, err = deltalog.ParseSchema(string(raw)); err != nil {
			return e, err
		}
	}
	slices.SortFunc(parts, func(a, b part) int { return a.idx - b.idx })
	for _, p := range parts {
		e.PartitionColumns = append(e.PartitionColumns, p.name)
	}
	return e, nil
}
