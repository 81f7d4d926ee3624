package hive

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// What Spark's HiveExternalCatalog writes for a data source table that Hive
// itself cannot read (a Delta table): the provider and the Spark schema in
// table parameters, the location in the storage parameter "path", and one
// placeholder column in place of the columns. Spark 4 sets the table's own
// location to a placeholder under its warehouse
// (".../db.db/t-__PLACEHOLDER__"), which the metastore then creates; the
// table's real location serves the engines that read the table location
// rather than "path" (Trino, Hive) and makes no stray directory.
//
// delta-spark records an empty schema (the log holds the schema); this
// package records the table's schema and partition columns, which Spark
// ignores for a Delta table and which show the table's columns to whoever
// browses the catalog.
const (
	paramProvider      = "spark.sql.sources.provider"
	paramSchema        = "spark.sql.sources.schema"
	paramSchemaParts   = "spark.sql.sources.schema.numParts"
	paramSchemaPart    = "spark.sql.sources.schema.part."
	paramNumPartCols   = "spark.sql.sources.schema.numPartCols"
	paramPartCol       = "spark.sql.sources.schema.partCol."
	paramExternal      = "EXTERNAL"
	paramPartProvider  = "spark.sql.partitionProvider"
	paramComment       = "comment"
	providerDelta      = "delta"
	tableTypeExternal  = "EXTERNAL_TABLE"
	serdeLazySimple    = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
	inputSequenceFile  = "org.apache.hadoop.mapred.SequenceFileInputFormat"
	outputSequenceFile = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
	serdePath          = "path"
	// schemaPartLength is Spark's spark.sql.sources.schemaStringLengthThreshold
	// default: the metastore's parameter values hold 4000 characters.
	schemaPartLength = 4000
)

// placeholderCol is the column Spark records for a data source table's
// schema (HiveExternalCatalog.EMPTY_DATA_SCHEMA).
var placeholderCol = fieldSchema{Name: "col", Type: "array<string>", Comment: "from deserializer"}

// ours are the table parameters this package derives from an Entry; the
// rest of an entry's Properties pass through.
func ours(k string) bool {
	switch k {
	case paramProvider, paramSchema, paramSchemaParts, paramNumPartCols, paramExternal, paramComment, paramPartProvider:
		return true
	}
	return hasPrefix(k, paramSchemaPart) || hasPrefix(k, paramPartCol)
}

// hiveOwn are parameters the metastore keeps by itself; Lookup leaves them
// out of an entry's Properties.
func hiveOwn(k string) bool {
	switch k {
	case "transient_lastDdlTime", "numFiles", "totalSize", "numRows", "rawDataSize",
		"COLUMN_STATS_ACCURATE", "numFilesErasureCoded", "bucketing_version", "spark.sql.create.version":
		return true
	}
	return false
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func checkName(n catalog.Name) error {
	if n.Catalog != "" {
		return fmt.Errorf("hive: %s: the Hive Metastore names tables database.table; leave the catalog part empty", n)
	}
	if n.Schema == "" || n.Table == "" {
		return fmt.Errorf("hive: %q: want database.table", n.String())
	}
	return nil
}

// tableOf is the metastore table for e.
func tableOf(e catalog.Entry, owner string, created time.Time) (table, error) {
	if err := checkName(e.Name); err != nil {
		return table{}, err
	}
	if e.Location == "" {
		return table{}, fmt.Errorf("hive: %s: no location", e.Name)
	}
	params := make(map[string]string, len(e.Properties)+8)
	for k, v := range e.Properties {
		if !ours(k) {
			params[k] = v
		}
	}
	params[paramProvider] = providerDelta
	params[paramExternal] = "TRUE"
	if e.Description != "" {
		params[paramComment] = e.Description
	}
	schema := e.Schema
	if schema == nil {
		schema = &deltalog.StructType{}
	}
	js, err := schema.SchemaString()
	if err != nil {
		return table{}, fmt.Errorf("hive: %s: encoding the schema: %w", e.Name, err)
	}
	// As Spark 4 does: one parameter when the schema fits, else numbered
	// parts.
	if len(js) <= schemaPartLength {
		params[paramSchema] = js
	} else {
		n := 0
		for ; len(js) > 0; n++ {
			l := min(schemaPartLength, len(js))
			params[paramSchemaPart+strconv.Itoa(n)] = js[:l]
			js = js[l:]
		}
		params[paramSchemaParts] = strconv.Itoa(n)
	}
	// delta-spark tracks a table's partitions in its log, and says so.
	params[paramPartProvider] = "catalog"
	if len(e.PartitionColumns) > 0 {
		params[paramNumPartCols] = strconv.Itoa(len(e.PartitionColumns))
		for i, c := range e.PartitionColumns {
			params[paramPartCol+strconv.Itoa(i)] = c
		}
	}
	return table{
		TableName:  e.Name.Table,
		DBName:     e.Name.Schema,
		Owner:      owner,
		CreateTime: int32(created.Unix()),
		SD: storageDescriptor{
			Cols:         []fieldSchema{placeholderCol},
			Location:     e.Location,
			InputFormat:  inputSequenceFile,
			OutputFormat: outputSequenceFile,
			NumBuckets:   -1,
			SerDe: serDeInfo{
				SerializationLib: serdeLazySimple,
				Parameters:       map[string]string{"serialization.format": "1", serdePath: e.Location},
			},
			Parameters: map[string]string{},
		},
		Parameters: params,
		TableType:  tableTypeExternal,
	}, nil
}

// entryOf is the entry a metastore table records.
func entryOf(name catalog.Name, t *table) (catalog.Entry, error) {
	e := catalog.Entry{Name: name, Location: t.SD.SerDe.Parameters[serdePath]}
	if e.Location == "" {
		e.Location = t.SD.Location
	}
	p := t.Parameters
	e.Description = p[paramComment]
	js, one := p[paramSchema]
	if n, err := strconv.Atoi(p[paramSchemaParts]); !one && err == nil && n > 0 {
		for i := range n {
			part, ok := p[paramSchemaPart+strconv.Itoa(i)]
			if !ok {
				return catalog.Entry{}, fmt.Errorf("hive: %s: parameter %s%d missing of %d", name, paramSchemaPart, i, n)
			}
			js += part
		}
	}
	if js != "" {
		st, err := deltalog.ParseSchema(js)
		if err != nil {
			return catalog.Entry{}, fmt.Errorf("hive: %s: the schema in %s*: %w", name, paramSchemaPart, err)
		}
		if len(st.Fields) > 0 {
			e.Schema = st
		}
	}
	if n, err := strconv.Atoi(p[paramNumPartCols]); err == nil {
		for i := range n {
			e.PartitionColumns = append(e.PartitionColumns, p[paramPartCol+strconv.Itoa(i)])
		}
	}
	props := maps.Clone(p)
	maps.DeleteFunc(props, func(k, _ string) bool { return ours(k) || hiveOwn(k) })
	if prov, ok := p[paramProvider]; ok && prov != providerDelta {
		props[paramProvider] = prov
	}
	if len(props) > 0 {
		e.Properties = props
	}
	return e, nil
}
