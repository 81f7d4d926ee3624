// Package datafile writes and reads the Parquet data files of a Delta table on
// parquet-go.
//
// Rows are [][]any aligned with the fields of a Delta schema, one Go value per
// column, with these conventions (nil is null everywhere):
//
//	boolean              bool
//	byte, short          int8, int16
//	integer, long        int32, int64
//	float, double        float32, float64
//	string               string
//	binary               []byte
//	date                 int32 days since 1970-01-01
//	timestamp(_ntz)      int64 microseconds since 1970-01-01T00:00:00 (UTC for timestamp);
//	                     the writer also takes a time.Time (its wall clock for timestamp_ntz)
//	decimal(p,s)         decimal128.Num: 128-bit unscaled value; the scale comes from the schema
//	array                []any
//	map                  []KV, in the order written
//	struct               []any aligned with the struct's fields
//
// The writer converts these straight into parquet-go rows (no reflection), splits them
// into files by partition and target size, and returns the add actions with their
// statistics. The reader resolves columns by physical name (or field id), reads columns
// page by page, assembles nested values from repetition and definition levels, fills
// partition columns from the add action and drops rows deleted by a deletion vector. It
// reads the files Spark and delta-rs write (INT96 timestamps, legacy lists, decimals in
// any physical type). The package carries no API-stability promise.
package datafile
