// Package decimal128 holds exact decimal numbers of up to 38 digits as 128-bit
// two's-complement unscaled integers, the form Avro, Parquet and Delta store them in.
//
// A [Num] carries no scale: the scale belongs to the column's type, as in Parquet and
// Arrow, so values of one column compare with == and as map keys, and a value decoded
// from an event equals the same value read back from a data file. Functions that need
// the scale (parsing, formatting) take it as an argument.
//
// It is the one decimal type of codecs (decoding Debezium events) and
// deltalog/datafile (reading and writing Parquet); it imports neither, and nothing but
// the standard library.
package decimal128
