package deltalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Stats are the per-file statistics stored as a JSON string in add.stats. Keys are
// physical column names; nested structs appear as nested maps. NumRecords counts physical
// rows, ignoring any deletion vector.
type Stats struct {
	NumRecords int64          `json:"numRecords"`
	MinValues  map[string]any `json:"minValues,omitempty"`
	MaxValues  map[string]any `json:"maxValues,omitempty"`
	NullCount  map[string]any `json:"nullCount,omitempty"`
	// TightBounds is only meaningful with deletion vectors; nil (absent) means true.
	TightBounds *bool `json:"tightBounds,omitempty"`
}

// JSON encodes the stats as the compact JSON stored in add.stats.
func (s Stats) JSON() (string, error) {
	b, err := MarshalPlain(s)
	if err != nil {
		return "", fmt.Errorf("encoding stats: %w", err)
	}
	return string(b), nil
}

// StatsSummary is what add.stats says of a file as a whole, without its
// column values.
type StatsSummary struct {
	NumRecords int64
	// TightBounds is nil when absent (true).
	TightBounds *bool
}

// ParseStatsSummary decodes only numRecords and tightBounds of add.stats,
// as ParseStats does, skipping the column values: a batch that marks rows
// in hundreds of files needs only these, and building the value maps cost
// most of its time with them. An empty string gives ok=false.
func ParseStatsSummary(s string) (sum StatsSummary, ok bool, err error) {
	if len(bytes.TrimSpace([]byte(s))) == 0 {
		return StatsSummary{}, false, nil
	}
	var raw struct {
		NumRecords  *json.Number    `json:"numRecords"`
		TightBounds *bool           `json:"tightBounds"`
		MinValues   json.RawMessage `json:"minValues"`
		MaxValues   json.RawMessage `json:"maxValues"`
		NullCount   json.RawMessage `json:"nullCount"`
	}
	// A Decoder, as in ParseStats, and the value maps checked to be objects,
	// so that both accept the same strings (FuzzParseStatsSummary).
	if err := json.NewDecoder(strings.NewReader(s)).Decode(&raw); err != nil {
		return StatsSummary{}, false, fmt.Errorf("parsing stats: %w", err)
	}
	for _, m := range []json.RawMessage{raw.MinValues, raw.MaxValues, raw.NullCount} {
		if len(m) > 0 && m[0] != '{' && string(m) != "null" {
			return StatsSummary{}, false, fmt.Errorf("parsing stats: column values %.20q are not an object", m)
		}
	}
	n, err := numRecords(raw.NumRecords)
	if err != nil {
		return StatsSummary{}, false, err
	}
	return StatsSummary{NumRecords: n, TightBounds: raw.TightBounds}, true, nil
}

// numRecords is stats.numRecords, 0 when absent.
func numRecords(num *json.Number) (int64, error) {
	if num == nil {
		return 0, nil
	}
	n, err := num.Int64()
	if err != nil || n < 0 {
		return 0, fmt.Errorf("parsing stats: bad numRecords %q", num.String())
	}
	return n, nil
}

// ParseStats decodes add.stats. Numbers stay json.Number so decimals and large longs are
// exact; an empty string gives ok=false (no stats).
func ParseStats(s string) (st Stats, ok bool, err error) {
	if len(bytes.TrimSpace([]byte(s))) == 0 {
		return Stats{}, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var raw struct {
		NumRecords  *json.Number   `json:"numRecords"`
		MinValues   map[string]any `json:"minValues"`
		MaxValues   map[string]any `json:"maxValues"`
		NullCount   map[string]any `json:"nullCount"`
		TightBounds *bool          `json:"tightBounds"`
	}
	if err := dec.Decode(&raw); err != nil {
		return Stats{}, false, fmt.Errorf("parsing stats: %w", err)
	}
	n, err := numRecords(raw.NumRecords)
	if err != nil {
		return Stats{}, false, err
	}
	return Stats{NumRecords: n, MinValues: raw.MinValues, MaxValues: raw.MaxValues, NullCount: raw.NullCount, TightBounds: raw.TightBounds}, true, nil
}
