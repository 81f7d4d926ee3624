package dbzgen

import (
	"bytes"
	"encoding/json"
)

// object is a JSON object that keeps its keys in insertion order, so the
// schema text comes out in the property order AvroData and Avro's
// Schema.toString produce.
type object []member

type member struct {
	key   string
	value any
}

// set appends key; callers build objects front to back.
func (o object) set(key string, value any) object { return append(o, member{key, value}) }

// MarshalJSON implements json.Marshaler.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
