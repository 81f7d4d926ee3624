package dbzgen

// Layout is the Debezium release line whose envelope and Source block the
// generator reproduces (reference brief §0).
type Layout int

const (
	// Layout31 is Debezium 3.1 and later: Source has connect.version 1 and
	// the long snapshot enum list; envelope fields before, after, source,
	// transaction, op, ts_ms, ts_us, ts_ns.
	Layout31 Layout = iota
	// Layout27 is Debezium 2.7 to 3.0: as Layout31 but Source has no
	// connect.version and the short snapshot enum list.
	Layout27
	// Layout26 is Debezium 2.6: transaction after ts_ns, and Source's ts_us
	// and ts_ns are required longs.
	Layout26
	// Layout25 is Debezium 2.0 to 2.5: envelope connect.version 1, fields
	// before, after, source, op, ts_ms, transaction, and no ts_us/ts_ns
	// anywhere.
	Layout25
)

// defaultVersion is the source.version string each layout writes.
func (l Layout) defaultVersion() string {
	switch l {
	case Layout27:
		return "2.7.4.Final"
	case Layout26:
		return "2.6.2.Final"
	case Layout25:
		return "2.5.4.Final"
	default:
		return "3.4.0.Final"
	}
}

// TimePrecision is Debezium's time.precision.mode.
type TimePrecision int

const (
	// TimeAdaptive (Debezium's default) picks ms, µs or ns Debezium types
	// from the column's fractional-second precision.
	TimeAdaptive TimePrecision = iota
	// TimeAdaptiveMicroseconds is adaptive_time_microseconds: as adaptive,
	// but every time(p) column is io.debezium.time.MicroTime.
	TimeAdaptiveMicroseconds
	// TimeConnect uses Kafka Connect's Date/Time/Timestamp logical types
	// (milliseconds; finer digits are truncated).
	TimeConnect
)

// DecimalHandling is Debezium's decimal.handling.mode.
type DecimalHandling int

const (
	// DecimalPrecise (default) writes Avro bytes with the decimal logical type.
	DecimalPrecise DecimalHandling = iota
	// DecimalDouble writes an Avro double.
	DecimalDouble
	// DecimalString writes the plain decimal text, padded to the scale.
	DecimalString
)

// BinaryHandling is Debezium's binary.handling.mode.
type BinaryHandling int

const (
	// BinaryBytes (default) writes Avro bytes.
	BinaryBytes BinaryHandling = iota
	// BinaryBase64 writes standard, padded base64 text.
	BinaryBase64
	// BinaryBase64URLSafe writes URL-safe, padded base64 text.
	BinaryBase64URLSafe
	// BinaryHex writes lower-case hex text.
	BinaryHex
)

// NameAdjustment is Debezium's field.name.adjustment.mode.
type NameAdjustment int

const (
	// NameAdjustAvro replaces each character Avro refuses with '_'
	// ("Unit Price" → "Unit_Price"). The generator defaults to it because the
	// sample tables need it; Debezium's own default is none.
	NameAdjustAvro NameAdjustment = iota
	// NameAdjustNone keeps names; a name Avro refuses makes Table fail, as
	// the AvroConverter would.
	NameAdjustNone
	// NameAdjustAvroUnicode replaces every character outside [A-Za-z0-9],
	// '_' included, with _uXXXX.
	NameAdjustAvroUnicode
)

// Options are the connector and converter settings the generator emulates.
// The zero value is Debezium 3.x with its defaults, except NameAdjustAvro.
type Options struct {
	// Prefix is topic.prefix; the default is "shop".
	Prefix string
	// Layout picks the envelope and Source layout; the default is Layout31.
	Layout Layout
	// Version is source.version; empty uses a release of Layout's line.
	Version string

	// TimePrecision is time.precision.mode (default adaptive).
	TimePrecision TimePrecision
	// DecimalHandling is decimal.handling.mode (default precise).
	DecimalHandling DecimalHandling
	// BinaryHandling is binary.handling.mode (default bytes).
	BinaryHandling BinaryHandling
	// NameAdjustment is field.name.adjustment.mode (default avro here).
	NameAdjustment NameAdjustment

	// PropagateSourceTypes emulates column.propagate.source.type=.* : every
	// column's Avro type gets connect.parameters with
	// __debezium.source.column.type/length/scale/name.
	PropagateSourceTypes bool

	// IgnoreDefaultForNullables emulates the converter option of that name:
	// a streaming event's unset source.snapshot is written as null instead
	// of the schema default "false".
	IgnoreDefaultForNullables bool
}

// DefaultOptions returns the zero Options with the prefix set: Debezium 3.x,
// adaptive time, precise decimals, bytes binaries, avro name adjustment.
func DefaultOptions() Options { return Options{Prefix: "shop"} }

func (o Options) withDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = "shop"
	}
	if o.Version == "" {
		o.Version = o.Layout.defaultVersion()
	}
	return o
}

// String names the layout by the Debezium releases it covers.
func (l Layout) String() string {
	switch l {
	case Layout31:
		return "3.1+"
	case Layout27:
		return "2.7-3.0"
	case Layout26:
		return "2.6"
	case Layout25:
		return "2.0-2.5"
	}
	return "unknown"
}
