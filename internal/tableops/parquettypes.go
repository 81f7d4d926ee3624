package tableops

import (
	"fmt"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// checkParquetType checks that a foreign Parquet column holds values of
// the table's type t: the Parquet reader accepts any byte array as a
// decimal or a string, so a file's strings would otherwise read as wrong
// decimals. The rules are Spark's for reading Parquet into a schema.
func checkParquetType(name string, t deltalog.Type, pt parquet.Type) error {
	kind := pt.Kind()
	var lt format.LogicalTypeValue
	if l := pt.LogicalType(); l != nil {
		lt = l.Value
	}
	ok := false
	if d, isDec := t.(deltalog.DecimalType); isDec {
		fd, _ := lt.(*format.DecimalType)
		ok = fd != nil && int(fd.Scale) == d.Scale && int(fd.Precision) <= d.Precision
	} else {
		intWidth := func(w int8) bool {
			it, _ := lt.(*format.IntType)
			return lt == nil || it != nil && it.IsSigned && it.BitWidth <= w
		}
		switch p, _ := t.(deltalog.PrimitiveType); p {
		case deltalog.TypeString:
			switch lt.(type) {
			case nil, *format.StringType, *format.EnumType, *format.JsonType:
				ok = kind == parquet.ByteArray
			}
		case deltalog.TypeBinary:
			switch lt.(type) {
			case nil:
				ok = kind == parquet.ByteArray || kind == parquet.FixedLenByteArray
			}
		case deltalog.TypeBoolean:
			ok = kind == parquet.Boolean
		case deltalog.TypeByte:
			ok = kind == parquet.Int32 && intWidth(8)
		case deltalog.TypeShort:
			ok = kind == parquet.Int32 && intWidth(16)
		case deltalog.TypeInteger:
			ok = kind == parquet.Int32 && intWidth(32)
		case deltalog.TypeLong:
			ok = (kind == parquet.Int32 || kind == parquet.Int64) && intWidth(64)
		case deltalog.TypeDate:
			_, ok = lt.(*format.DateType)
			ok = ok && kind == parquet.Int32
		case deltalog.TypeTimestamp, deltalog.TypeTimestampNTZ:
			_, isTS := lt.(*format.TimestampType)
			ok = kind == parquet.Int96 || kind == parquet.Int64 && isTS
		case deltalog.TypeFloat:
			ok = kind == parquet.Float
		case deltalog.TypeDouble:
			ok = kind == parquet.Float || kind == parquet.Double
		}
	}
	if !ok {
		return fmt.Errorf("%w: column %s is %s in the file, the table's is %s", ErrFileType, name, pt, t)
	}
	return nil
}

// checkParquetColumns checks each field against the file's column of its name.
func checkParquetColumns(f *parquet.File, fields []deltalog.StructField) error {
	for _, fd := range fields {
		c := f.Root().Column(fd.Name)
		if c == nil {
			continue
		}
		if !c.Leaf() {
			return fmt.Errorf("%w: column %s is nested in the file", ErrFileType, fd.Name)
		}
		if err := checkParquetType(fd.Name, fd.Type, c.Type()); err != nil {
			return err
		}
	}
	return nil
}
