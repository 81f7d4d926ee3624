package dbzgen

// connectType is a Kafka Connect schema as the Confluent AvroConverter writes
// it into Avro: a primitive plus connect.* properties (brief §1.4).
type connectType struct {
	avro        string // "int", "long", "string", "bytes", ...
	connectType string // connect.type: "int16" for tinyint and smallint
	extra       object // type properties before the connect ones (decimal scale/precision)
	version     int    // connect.version; 0 for none
	params      object // connect.parameters
	def         any    // connect.default, when hasDef
	hasDef      bool
	name        string // connect.name, the Connect semantic name
	logical     string // Avro logicalType
}

// schema returns the Avro type: a bare primitive name when no property is
// set, as Avro prints it, else an object in AvroData's property order.
func (c connectType) schema() any {
	if c.connectType == "" && len(c.extra) == 0 && c.version == 0 && len(c.params) == 0 && !c.hasDef && c.name == "" && c.logical == "" {
		return c.avro
	}
	o := object{}.set("type", c.avro)
	if c.connectType != "" {
		o = o.set("connect.type", c.connectType)
	}
	o = append(o, c.extra...)
	if c.version != 0 {
		o = o.set("connect.version", c.version)
	}
	if len(c.params) > 0 {
		o = o.set("connect.parameters", c.params)
	}
	if c.hasDef {
		o = o.set("connect.default", c.def)
	}
	if c.name != "" {
		o = o.set("connect.name", c.name)
	}
	if c.logical != "" {
		o = o.set("logicalType", c.logical)
	}
	return o
}

// branch is the name goavro gives this type inside a union: the primitive,
// or "primitive.logicalType".
func (c connectType) branch() string {
	if c.logical != "" {
		return c.avro + "." + c.logical
	}
	return c.avro
}

// Debezium and Kafka Connect semantic type names.
const (
	nameDate           = "io.debezium.time.Date"
	nameTime           = "io.debezium.time.Time"
	nameMicroTime      = "io.debezium.time.MicroTime"
	nameNanoTime       = "io.debezium.time.NanoTime"
	nameTimestamp      = "io.debezium.time.Timestamp"
	nameMicroTimestamp = "io.debezium.time.MicroTimestamp"
	nameNanoTimestamp  = "io.debezium.time.NanoTimestamp"
	nameZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	nameEnum           = "io.debezium.data.Enum"
	nameDecimal        = "org.apache.kafka.connect.data.Decimal"
	nameConnectDate    = "org.apache.kafka.connect.data.Date"
	nameConnectTime    = "org.apache.kafka.connect.data.Time"
	nameConnectTS      = "org.apache.kafka.connect.data.Timestamp"
)
