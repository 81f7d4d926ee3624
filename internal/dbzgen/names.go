package dbzgen

import (
	"fmt"
	"strings"
)

// adjustName applies field.name.adjustment.mode to a column name (brief §6).
func adjustName(name string, mode NameAdjustment) (string, error) {
	switch mode {
	case NameAdjustAvroUnicode:
		return adjustUnicode(name), nil
	case NameAdjustNone:
		if !validAvroName(name) {
			// What the AvroConverter throws: SchemaParseException.
			return "", fmt.Errorf("%w: illegal character in field name %q (set NameAdjustAvro)", ErrBadTable, name)
		}
		return name, nil
	}
	return adjustAvro(name), nil
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
func isDigit(r rune) bool  { return r >= '0' && r <= '9' }

func validAvroName(s string) bool {
	for i, r := range s {
		if !(isLetter(r) || r == '_' || i > 0 && isDigit(r)) {
			return false
		}
	}
	return s != ""
}

// adjustAvro replaces each character outside [A-Za-z0-9_] with '_'; a
// leading digit gets a '_' in front ("1col" → "_1col").
func adjustAvro(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case isLetter(r) || r == '_':
			b.WriteRune(r)
		case isDigit(r):
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// adjustUnicode replaces every character outside [A-Za-z0-9] (a leading
// digit too) with _u and its code as four or more lower-case hex digits.
func adjustUnicode(s string) string {
	var b strings.Builder
	for i, r := range s {
		if isLetter(r) || i > 0 && isDigit(r) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "_u%04x", r)
	}
	return b.String()
}

// sourceParams are the connect.parameters column.propagate.source.type adds
// (brief §6). Length and scale follow the JDBC driver's COLUMN_SIZE and
// DECIMAL_DIGITS; they are inferred from the driver's rules, not captured
// from a live connector.
func sourceParams(col Column, t sqlType) object {
	length, scale := -1, -1
	frac := func(base int) int {
		if t.scale > 0 {
			return base + 1 + t.scale
		}
		return base
	}
	const lobBytes, lobChars = 2147483647, 1073741823
	switch t.name {
	case "bit":
		length = 1
	case "tinyint":
		length, scale = 3, 0
	case "smallint":
		length, scale = 5, 0
	case "int":
		length, scale = 10, 0
	case "bigint":
		length, scale = 19, 0
	case "real":
		length = 24
	case "float":
		length = 53
		if t.precision <= 24 {
			length = 24
		}
	case "decimal", "numeric", "money", "smallmoney":
		length, scale = t.precision, t.scale
	case "char", "nchar", "binary":
		length = t.length
	case "varchar", "varbinary":
		length = t.length
		if length == maxLength {
			length = lobBytes
		}
	case "nvarchar":
		length = t.length
		if length == maxLength {
			length = lobChars
		}
	case "text", "image", "geometry", "geography":
		length = lobBytes
	case "ntext", "xml":
		length = lobChars
	case "hierarchyid":
		length = 892
	case "uniqueidentifier":
		length = 36
	case "rowversion":
		length = 8
	case "date":
		length, scale = 10, 0
	case "time":
		length, scale = frac(8), t.scale
	case "datetime":
		length, scale = 23, 3
	case "smalldatetime":
		length, scale = 16, 0
	case "datetime2":
		length, scale = frac(19), t.scale
	case "datetimeoffset":
		length, scale = frac(26), t.scale
	}
	p := object{}.set("__debezium.source.column.type", sourceTypeName(t))
	if length >= 0 {
		p = p.set("__debezium.source.column.length", fmt.Sprint(length))
	}
	if scale >= 0 {
		p = p.set("__debezium.source.column.scale", fmt.Sprint(scale))
	}
	return p.set("__debezium.source.column.name", col.Name)
}

// sourceTypeName is the TYPE_NAME the JDBC driver reports, upper-cased as
// Debezium propagates it: SQL Server stores float(1-24) as real and knows
// rowversion by its older name, timestamp.
func sourceTypeName(t sqlType) string {
	switch {
	case t.name == "float" && t.precision <= 24:
		return "REAL"
	case t.name == "rowversion":
		return "TIMESTAMP"
	}
	return t.String()
}
