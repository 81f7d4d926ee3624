package dbzgen

import (
	"bytes"
	"math"
	"math/big"
	"strings"
	"time"
)

// Orders is dbo.orders of database sales, the worked example of the reference
// brief §9, with the [Unit Price] column that needs name adjustment.
func Orders() TableDef {
	return TableDef{
		Database: "sales", Schema: "dbo", Name: "orders",
		Columns: []Column{
			{Name: "order_id", Type: "int"},
			{Name: "customer_id", Type: "nvarchar(20)"},
			{Name: "order_date", Type: "date", Nullable: true},
			{Name: "status", Type: "varchar(20)", Nullable: true},
			{Name: "amount", Type: "decimal(10,2)", Nullable: true},
			{Name: "updated_at", Type: "datetime2(3)", Nullable: true},
			{Name: "Unit Price", Type: "money", Nullable: true},
			{Name: "created", Type: "datetimeoffset", Nullable: true},
			{Name: "flag", Type: "bit", Nullable: true},
			{Name: "guid", Type: "uniqueidentifier", Nullable: true},
		},
		Key: []string{"order_id"},
	}
}

// Customers is dbo.customers of database sales, keyed by a string id that
// orders.customer_id refers to.
func Customers() TableDef {
	return TableDef{
		Database: "sales", Schema: "dbo", Name: "customers",
		Columns: []Column{
			{Name: "customer_id", Type: "nvarchar(20)"},
			{Name: "name", Type: "nvarchar(100)"},
			{Name: "email", Type: "varchar(200)", Nullable: true},
			{Name: "country", Type: "char(2)", Nullable: true},
			{Name: "credit_limit", Type: "decimal(12,2)", Nullable: true},
			{Name: "created_at", Type: "datetime2(3)"},
			{Name: "is_active", Type: "bit"},
		},
		Key: []string{"customer_id"},
	}
}

// Tickets is dbo.tickets of database sales, with LOB columns (an
// nvarchar(max) body and a varbinary(max) attachment) that updates may leave
// unchanged, which Debezium then sends as the unavailable-value placeholder
// (WorkloadOptions.Placeholders).
func Tickets() TableDef {
	return TableDef{
		Database: "sales", Schema: "dbo", Name: "tickets",
		Columns: []Column{
			{Name: "ticket_id", Type: "int"},
			{Name: "status", Type: "varchar(20)", Nullable: true},
			{Name: "priority", Type: "tinyint", Nullable: true},
			{Name: "body", Type: "nvarchar(max)", Nullable: true},
			{Name: "attachment", Type: "varbinary(max)", Nullable: true},
			{Name: "updated_at", Type: "datetime2(3)", Nullable: true},
		},
		Key: []string{"ticket_id"},
	}
}

// SampleDatabase is the quickstart's source database: customers and orders.
func SampleDatabase() []TableDef { return []TableDef{Customers(), Orders()} }

// EveryType is dbo.all_types of database sales: one column per SQL Server
// type of the reference brief §4 (with the fractional-second precisions that
// change the Debezium type), all nullable, keyed by id, plus [Unit Price].
// The sql_variant column is there to show it is dropped.
func EveryType() TableDef {
	cols := []Column{{Name: "id", Type: "int"}}
	for _, c := range []struct{ name, typ string }{
		{"c_bit", "bit"},
		{"c_tinyint", "tinyint"},
		{"c_smallint", "smallint"},
		{"c_int", "int"},
		{"c_bigint", "bigint"},
		{"c_real", "real"},
		{"c_float24", "float(24)"},
		{"c_float", "float"},
		{"c_decimal", "decimal(38,10)"},
		{"c_decimal_int", "decimal(38,0)"},
		{"c_numeric", "numeric"},
		{"c_numeric_5_5", "numeric(5,5)"},
		{"c_money", "money"},
		{"c_smallmoney", "smallmoney"},
		{"c_char", "char(5)"},
		{"c_nchar", "nchar(5)"},
		{"c_varchar", "varchar(50)"},
		{"c_nvarchar", "nvarchar(50)"},
		{"c_varchar_max", "varchar(max)"},
		{"c_nvarchar_max", "nvarchar(max)"},
		{"c_text", "text"},
		{"c_ntext", "ntext"},
		{"c_xml", "xml"},
		{"c_uniqueidentifier", "uniqueidentifier"},
		{"c_binary", "binary(4)"},
		{"c_varbinary", "varbinary(16)"},
		{"c_varbinary_max", "varbinary(max)"},
		{"c_image", "image"},
		{"c_rowversion", "rowversion"},
		{"c_geometry", "geometry"},
		{"c_geography", "geography"},
		{"c_hierarchyid", "hierarchyid"},
		{"c_sql_variant", "sql_variant"},
		{"c_date", "date"},
		{"c_time0", "time(0)"},
		{"c_time3", "time(3)"},
		{"c_time6", "time(6)"},
		{"c_time", "time"},
		{"c_datetime", "datetime"},
		{"c_smalldatetime", "smalldatetime"},
		{"c_datetime2_0", "datetime2(0)"},
		{"c_datetime2_3", "datetime2(3)"},
		{"c_datetime2_6", "datetime2(6)"},
		{"c_datetime2", "datetime2"},
		{"c_datetimeoffset3", "datetimeoffset(3)"},
		{"c_datetimeoffset", "datetimeoffset"},
		{"Unit Price", "money"},
	} {
		cols = append(cols, Column{Name: c.name, Type: c.typ, Nullable: true})
	}
	return TableDef{Database: "sales", Schema: "dbo", Name: "all_types", Columns: cols, Key: []string{"id"}}
}

// EveryTypeRow is a row of [EveryType] with boundary values: integer and
// decimal extremes, money's minimum, empty and multi-byte strings, the
// unavailable-value placeholder, max-length binary, datetime2 at 0001-01-01
// and 9999-12-31, negative and fractional offsets, and clock times that SQL
// Server rounds.
func EveryTypeRow() Row {
	clock := 10*time.Hour + 23*time.Minute + 45*time.Second + 678901200 // 10:23:45.6789012
	return Row{
		"id":                 1,
		"c_bit":              true,
		"c_tinyint":          uint8(255),
		"c_smallint":         int16(math.MinInt16),
		"c_int":              int32(math.MinInt32),
		"c_bigint":           int64(math.MaxInt64),
		"c_real":             float32(1.5),
		"c_float24":          float32(-0.25),
		"c_float":            math.Pi,
		"c_decimal":          "9999999999999999999999999999.9999999999",
		"c_decimal_int":      "-99999999999999999999999999999999999999",
		"c_numeric":          "123456789012345678",
		"c_numeric_5_5":      "-0.00001",
		"c_money":            "-922337203685477.5808",
		"c_smallmoney":       big.NewRat(2147483647, 10000),
		"c_char":             "ab",
		"c_nchar":            "é",
		"c_varchar":          "",
		"c_nvarchar":         "日本語",
		"c_varchar_max":      Placeholder{},
		"c_nvarchar_max":     strings.Repeat("x", 300),
		"c_text":             "t",
		"c_ntext":            "nt",
		"c_xml":              "<a/>",
		"c_uniqueidentifier": "6f9619ff-8b86-d011-b42d-00c04fc964ff",
		"c_binary":           []byte{1, 2},
		"c_varbinary":        bytes.Repeat([]byte{0xab}, 16),
		"c_varbinary_max":    Placeholder{},
		"c_image":            []byte{0xff},
		"c_rowversion":       []byte{0, 0, 0, 0, 0, 0, 0x07, 0xd1},
		"c_geometry":         []byte{0xe6, 0x10},
		"c_geography":        []byte{0xe6, 0x11},
		"c_hierarchyid":      []byte{0x58},
		"c_sql_variant":      "dropped",
		"c_date":             time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		"c_time0":            clock,
		"c_time3":            clock,
		"c_time6":            clock,
		"c_time":             clock,
		"c_datetime":         time.Date(2024, 3, 15, 10, 30, 45, 123000000, time.UTC),
		"c_smalldatetime":    time.Date(2024, 3, 15, 10, 30, 45, 0, time.UTC),
		"c_datetime2_0":      time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		"c_datetime2_3":      time.Date(2024, 3, 15, 10, 30, 45, 123000000, time.FixedZone("ignored", 3600)),
		"c_datetime2_6":      time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC),
		"c_datetime2":        time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
		"c_datetimeoffset3":  time.Date(2024, 3, 15, 10, 30, 45, 123500000, time.FixedZone("", -(5*3600+1800))),
		"c_datetimeoffset":   time.Date(2024, 3, 15, 10, 30, 45, 123456700, time.FixedZone("", 2*3600)),
		"Unit Price":         "9.99",
	}
}
