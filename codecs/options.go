package codecs

import (
	"fmt"
	"log/slog"
	"maps"
)

// BinaryMode is the connector's binary.handling.mode.
type BinaryMode string

// Binary handling modes.
const (
	BinaryBytes     BinaryMode = "bytes"
	BinaryBase64    BinaryMode = "base64"
	BinaryBase64URL BinaryMode = "base64-url-safe"
	BinaryHex       BinaryMode = "hex"
)

// DefaultPlaceholder is Debezium's default unavailable.value.placeholder.
const DefaultPlaceholder = "__debezium_unavailable_value"

// Converter is the Kafka Connect value and key converter the connector
// wrote its records with.
type Converter string

// Converters.
const (
	// ConverterAvro is Confluent's AvroConverter: the Confluent wire header
	// and an Avro body whose schema is in the registry.
	ConverterAvro Converter = "avro"
	// ConverterJSON is Kafka's JsonConverter with schemas.enable=true:
	// {"schema": <Connect schema>, "payload": <value>} in every record.
	ConverterJSON Converter = "json"
)

// Options configures a [Decoder]. The zero value is usable.
type Options struct {
	// Converter is how keys and values are encoded (default
	// [ConverterAvro]).
	Converter Converter
	// BinaryHandling is the connector's binary.handling.mode (default
	// bytes). Under base64/hex, a string column whose propagated source
	// type is binary (column.propagate.source.type) is decoded back to
	// binary; without the propagated type it stays a string. The
	// placeholder is recognised in every rendering regardless.
	BinaryHandling BinaryMode
	// Placeholder is the connector's unavailable.value.placeholder
	// (default [DefaultPlaceholder]).
	Placeholder string
	// KeyColumns names the key columns of tables whose records have no
	// key (no primary key and no unique index). Map keys are
	// "schema.table" or "database.schema.table"; values are source column
	// names. A keyless record of a table not listed is an error
	// ([ErrMissingKey]).
	KeyColumns map[string][]string
	// Declared types the topics written by the JsonConverter with
	// schemas.enable=false (keyed by topic; json converter only). Their
	// records are decoded by [Decoder.DecodeRecord], which knows the topic.
	Declared map[string]DeclaredTable
	// Logger receives registry retry and schema-compilation lines
	// (default: discarded).
	Logger *slog.Logger
}

func (o *Options) normalize() error {
	switch o.Converter {
	case "":
		o.Converter = ConverterAvro
	case ConverterAvro, ConverterJSON:
	default:
		return fmt.Errorf("codecs: converter %q: want avro or json", o.Converter)
	}
	switch o.BinaryHandling {
	case "":
		o.BinaryHandling = BinaryBytes
	case BinaryBytes, BinaryBase64, BinaryBase64URL, BinaryHex:
	default:
		return fmt.Errorf("codecs: binary handling mode %q: want bytes, base64, base64-url-safe or hex", o.BinaryHandling)
	}
	if o.Placeholder == "" {
		o.Placeholder = DefaultPlaceholder
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// The decoder reads the map concurrently; the caller keeps its own.
	o.KeyColumns = maps.Clone(o.KeyColumns)
	return nil
}
