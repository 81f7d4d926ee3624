package hive

import (
	"context"

	"github.com/apache/thrift/lib/go/thrift"
)

// The subset of hive_metastore.thrift this client sends and reads. Field ids
// are those of the IDL (Hive 2.3 through 4.x share them); fields not listed
// here are skipped on read and left unset on write.

// fieldSchema is FieldSchema: a column.
type fieldSchema struct {
	Name, Type, Comment string
}

// serDeInfo is SerDeInfo.
type serDeInfo struct {
	Name, SerializationLib string
	Parameters             map[string]string
}

// storageDescriptor is StorageDescriptor.
type storageDescriptor struct {
	Cols                      []fieldSchema
	Location                  string
	InputFormat, OutputFormat string
	Compressed                bool
	NumBuckets                int32
	SerDe                     serDeInfo
	BucketCols                []string
	Parameters                map[string]string
}

// table is Table.
type table struct {
	TableName, DBName, Owner string
	CreateTime               int32
	SD                       storageDescriptor
	PartitionKeys            []fieldSchema
	Parameters               map[string]string
	TableType                string
}

// database is Database.
type database struct {
	Name, Description, LocationURI string
	Parameters                     map[string]string
}

func (e *enc) fieldSchemas(id int16, cols []fieldSchema) {
	e.structList(id, len(cols), func(i int) {
		e.str(1, cols[i].Name)
		e.str(2, cols[i].Type)
		e.str(3, cols[i].Comment)
	})
}

func (e *enc) table(t *table) {
	e.str(1, t.TableName)
	e.str(2, t.DBName)
	e.str(3, t.Owner)
	e.i32(4, t.CreateTime)
	e.i32(5, 0) // lastAccessTime
	e.i32(6, 0) // retention
	e.structField(7, func() {
		sd := &t.SD
		e.fieldSchemas(1, sd.Cols)
		e.str(2, sd.Location)
		e.str(3, sd.InputFormat)
		e.str(4, sd.OutputFormat)
		e.boolean(5, sd.Compressed)
		e.i32(6, sd.NumBuckets)
		e.structField(7, func() {
			e.str(1, sd.SerDe.Name)
			e.str(2, sd.SerDe.SerializationLib)
			e.strMap(3, sd.SerDe.Parameters)
		})
		e.strList(8, sd.BucketCols)
		e.structList(9, 0, func(int) {}) // sortCols
		e.strMap(10, sd.Parameters)
	})
	e.fieldSchemas(8, t.PartitionKeys)
	e.strMap(9, t.Parameters)
	e.str(12, t.TableType)
}

func (e *enc) database(d *database) {
	e.str(1, d.Name)
	e.str(2, d.Description)
	if d.LocationURI != "" { // unset: the metastore's warehouse
		e.str(3, d.LocationURI)
	}
	e.strMap(4, d.Parameters)
}

func readFieldSchemas(ctx context.Context, p thrift.TProtocol) ([]fieldSchema, error) {
	var cols []fieldSchema
	err := readStructList(ctx, p, func() error {
		var c fieldSchema
		err := readStruct(ctx, p, func(id int16, t thrift.TType) (bool, error) {
			var err error
			switch {
			case id == 1 && t == thrift.STRING:
				c.Name, err = p.ReadString(ctx)
			case id == 2 && t == thrift.STRING:
				c.Type, err = p.ReadString(ctx)
			case id == 3 && t == thrift.STRING:
				c.Comment, err = p.ReadString(ctx)
			default:
				return false, nil
			}
			return true, err
		})
		cols = append(cols, c)
		return err
	})
	return cols, err
}

func readSerDe(ctx context.Context, p thrift.TProtocol, s *serDeInfo) error {
	return readStruct(ctx, p, func(id int16, t thrift.TType) (bool, error) {
		var err error
		switch {
		case id == 1 && t == thrift.STRING:
			s.Name, err = p.ReadString(ctx)
		case id == 2 && t == thrift.STRING:
			s.SerializationLib, err = p.ReadString(ctx)
		case id == 3 && t == thrift.MAP:
			s.Parameters, err = readStrMap(ctx, p)
		default:
			return false, nil
		}
		return true, err
	})
}

func readStorage(ctx context.Context, p thrift.TProtocol, sd *storageDescriptor) error {
	return readStruct(ctx, p, func(id int16, t thrift.TType) (bool, error) {
		var err error
		switch {
		case id == 1 && t == thrift.LIST:
			sd.Cols, err = readFieldSchemas(ctx, p)
		case id == 2 && t == thrift.STRING:
			sd.Location, err = p.ReadString(ctx)
		case id == 3 && t == thrift.STRING:
			sd.InputFormat, err = p.ReadString(ctx)
		case id == 4 && t == thrift.STRING:
			sd.OutputFormat, err = p.ReadString(ctx)
		case id == 5 && t == thrift.BOOL:
			sd.Compressed, err = p.ReadBool(ctx)
		case id == 6 && t == thrift.I32:
			sd.NumBuckets, err = p.ReadI32(ctx)
		case id == 7 && t == thrift.STRUCT:
			err = readSerDe(ctx, p, &sd.SerDe)
		case id == 10 && t == thrift.MAP:
			sd.Parameters, err = readStrMap(ctx, p)
		default:
			return false, nil
		}
		return true, err
	})
}

func readTable(ctx context.Context, p thrift.TProtocol, tb *table) error {
	return readStruct(ctx, p, func(id int16, t thrift.TType) (bool, error) {
		var err error
		switch {
		case id == 1 && t == thrift.STRING:
			tb.TableName, err = p.ReadString(ctx)
		case id == 2 && t == thrift.STRING:
			tb.DBName, err = p.ReadString(ctx)
		case id == 3 && t == thrift.STRING:
			tb.Owner, err = p.ReadString(ctx)
		case id == 4 && t == thrift.I32:
			tb.CreateTime, err = p.ReadI32(ctx)
		case id == 7 && t == thrift.STRUCT:
			err = readStorage(ctx, p, &tb.SD)
		case id == 8 && t == thrift.LIST:
			tb.PartitionKeys, err = readFieldSchemas(ctx, p)
		case id == 9 && t == thrift.MAP:
			tb.Parameters, err = readStrMap(ctx, p)
		case id == 12 && t == thrift.STRING:
			tb.TableType, err = p.ReadString(ctx)
		default:
			return false, nil
		}
		return true, err
	})
}

// readGetTableResult reads GetTableResult {1: Table table}.
func readGetTableResult(ctx context.Context, p thrift.TProtocol, tb *table) error {
	return readStruct(ctx, p, func(id int16, t thrift.TType) (bool, error) {
		if id == 1 && t == thrift.STRUCT {
			return true, readTable(ctx, p, tb)
		}
		return false, nil
	})
}

func readDatabase(ctx context.Context, p thrift.TProtocol, d *database) error {
	return readStruct(ctx, p, func(id int16, t thrift.TType) (bool, error) {
		var err error
		switch {
		case id == 1 && t == thrift.STRING:
			d.Name, err = p.ReadString(ctx)
		case id == 2 && t == thrift.STRING:
			d.Description, err = p.ReadString(ctx)
		case id == 3 && t == thrift.STRING:
			d.LocationURI, err = p.ReadString(ctx)
		case id == 4 && t == thrift.MAP:
			d.Parameters, err = readStrMap(ctx, p)
		default:
			return false, nil
		}
		return true, err
	})
}
