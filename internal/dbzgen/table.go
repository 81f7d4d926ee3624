package dbzgen

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadTable is wrapped by the errors Table returns for a definition that
// SQL Server or the Avro converter would refuse.
var ErrBadTable = errors.New("dbzgen: invalid table definition")

// TableDef describes a captured SQL Server table.
type TableDef struct {
	Database string // e.g. "sales"
	Schema   string // e.g. "dbo"
	Name     string // e.g. "orders"
	Columns  []Column
	// Key names the primary-key columns in key order. Empty means the table
	// has no key: Kafka keys are null.
	Key []string
}

// Column is one SQL Server column.
type Column struct {
	// Name is the SQL Server name, e.g. "Unit Price".
	Name string
	// Type is the SQL Server type as written in DDL: "int",
	// "decimal(10,2)", "nvarchar(20)", "varbinary(max)", "datetime2(3)",
	// "float(24)". Omitted arguments take SQL Server's defaults
	// (decimal(18,0), datetime2(7), char(1), ...).
	Type string
	// Nullable is true for NULL columns.
	Nullable bool
	// Default is the column's SQL DEFAULT as a Go value, nil for none.
	// Debezium propagates it as the Connect default, which makes a nullable
	// column's union [T, "null"] (default first) and makes the converter
	// write the default for an explicit NULL unless
	// IgnoreDefaultForNullables is set. Supported for columns whose Avro
	// value is a boolean, number or string.
	Default any
}

// sqlType is a parsed Column.Type.
type sqlType struct {
	name      string // lower case, e.g. "decimal"
	length    int    // char/binary length; maxLength for (max)
	precision int    // decimal precision; float mantissa bits
	scale     int    // decimal scale; fractional-second digits
}

// maxLength marks (max) columns.
const maxLength = -1

// parseType parses a DDL type such as "decimal(10,2)" and applies SQL
// Server's defaults for omitted arguments.
func parseType(s string) (sqlType, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	name, args, hasArgs := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	var nums []string
	if hasArgs {
		if !strings.HasSuffix(args, ")") {
			return sqlType{}, fmt.Errorf("%w: type %q: missing ')'", ErrBadTable, s)
		}
		for a := range strings.SplitSeq(strings.TrimSuffix(args, ")"), ",") {
			nums = append(nums, strings.TrimSpace(a))
		}
	}
	arg := func(i, def, lo, hi int, allowMax bool) (int, error) {
		if i >= len(nums) {
			return def, nil
		}
		if allowMax && nums[i] == "max" {
			return maxLength, nil
		}
		n, err := strconv.Atoi(nums[i])
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("%w: type %q: argument %q out of range %d..%d", ErrBadTable, s, nums[i], lo, hi)
		}
		return n, nil
	}
	t := sqlType{name: name}
	maxArgs := 0
	var err error
	switch name {
	case "bit", "tinyint", "smallint", "int", "bigint", "real", "money", "smallmoney",
		"text", "ntext", "xml", "uniqueidentifier", "image", "rowversion", "timestamp",
		"date", "datetime", "smalldatetime", "geometry", "geography", "hierarchyid", "sql_variant":
	case "float":
		maxArgs = 1
		t.precision, err = arg(0, 53, 1, 53, false)
	case "decimal", "numeric":
		maxArgs = 2
		if t.precision, err = arg(0, 18, 1, 38, false); err == nil {
			t.scale, err = arg(1, 0, 0, t.precision, false)
		}
	case "char", "binary":
		maxArgs = 1
		t.length, err = arg(0, 1, 1, 8000, false)
	case "nchar":
		maxArgs = 1
		t.length, err = arg(0, 1, 1, 4000, false)
	case "varchar", "varbinary":
		maxArgs = 1
		t.length, err = arg(0, 1, 1, 8000, true)
	case "nvarchar":
		maxArgs = 1
		t.length, err = arg(0, 1, 1, 4000, true)
	case "time", "datetime2", "datetimeoffset":
		maxArgs = 1
		t.scale, err = arg(0, 7, 0, 7, false)
	default:
		return sqlType{}, fmt.Errorf("%w: unknown SQL Server type %q", ErrBadTable, s)
	}
	if err != nil {
		return sqlType{}, err
	}
	if len(nums) > maxArgs {
		return sqlType{}, fmt.Errorf("%w: type %q takes at most %d arguments", ErrBadTable, s, maxArgs)
	}
	switch t.name {
	case "money":
		t.precision, t.scale = 19, 4
	case "smallmoney":
		t.precision, t.scale = 10, 4
	case "datetime":
		t.scale = 3
	case "timestamp":
		t.name = "rowversion" // the old synonym
	}
	return t, nil
}

// isLOB reports whether Debezium (3.6+) sends the unavailable-value
// placeholder for the column when an update leaves it unchanged.
func (t sqlType) isLOB() bool {
	switch t.name {
	case "varchar", "nvarchar", "varbinary":
		return t.length == maxLength
	}
	return false
}

// String renders the type as Debezium's __debezium.source.column.type does:
// the upper-case type name without arguments.
func (t sqlType) String() string { return strings.ToUpper(t.name) }
