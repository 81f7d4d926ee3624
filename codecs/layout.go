package codecs

// Column is one column of a table as the Avro schema describes it.
type Column struct {
	// Name is the source column name: __debezium.source.column.name when
	// the connector propagates it, else the Avro field name.
	Name string
	// AvroName is the field name in the Avro record (after Debezium's
	// field.name.adjustment.mode, e.g. "Unit_Price" for "Unit Price").
	AvroName string
	Type     Type
	Nullable bool
	// SourceType is the SQL Server type rendered from the propagated
	// __debezium.source.column.type/length/scale ("DECIMAL(10,2)",
	// "NVARCHAR(max)"), empty when not propagated.
	SourceType string
	// Comment is the column comment for the Delta schema: the source
	// column's own comment if propagated, and the source type.
	Comment string

	conv conv
	// branch is goavro's name for the non-null union branch of a nullable
	// column ("string", "long", ...): a direct map lookup beats ranging
	// over goavro's single-entry union map.
	branch string
}

// Layout is the ordered column set of one Avro row or key record, derived
// once per schema id and shared (read-only) by every change using it.
type Layout struct {
	// SchemaID is the registry id of the schema this layout came from
	// (0 for key layouts synthesized from configured key columns).
	SchemaID int
	// Name is the Avro full name of the record ("shop.sales.dbo.orders.Value").
	Name    string
	Columns []Column
}

// Index returns the index of the column with the given source name, or -1.
func (l *Layout) Index(name string) int {
	for i := range l.Columns {
		if l.Columns[i].Name == name {
			return i
		}
	}
	return -1
}

func (l *Layout) indexAvro(name string) int {
	for i := range l.Columns {
		if l.Columns[i].AvroName == name {
			return i
		}
	}
	return -1
}
