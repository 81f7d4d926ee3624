package datafile

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/deltatext"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// Statistics table properties and Spark's defaults (protocol §2.9).
const (
	propNumIndexedCols = "delta.dataSkippingNumIndexedCols"
	propStatsColumns   = "delta.dataSkippingStatsColumns"
	defaultNumIndexed  = 32
	stringPrefixLen    = 32
	maxCodePoint       = '\U0010FFFF'
)

// colStats collects nullCount and, for eligible types, min and max of one column.
type colStats struct {
	path   []string // physical path for the stats JSON
	leaf   leafKind
	scale  int
	minmax bool

	nulls      int64
	seen       bool
	minI, maxI int64
	minF, maxF float64
	nan        bool
	unbounded  bool // a value could not be compared: write no bounds
	minS, maxS string
	minD, maxD decimal128.Num
}

// minMaxEligible mirrors Spark's SkippingEligibleDataType: no bounds for boolean or binary.
func minMaxEligible(k leafKind) bool { return k != leafBool && k != leafBinary }

func (c *colStats) reset() {
	*c = colStats{path: c.path, leaf: c.leaf, scale: c.scale, minmax: c.minmax}
}

func (c *colStats) int(i int64) {
	if !c.seen {
		c.minI, c.maxI, c.seen = i, i, true
		return
	}
	c.minI, c.maxI = min(c.minI, i), max(c.maxI, i)
}

func (c *colStats) float(f float64) {
	if math.IsNaN(f) {
		c.nan = true
		return
	}
	if !c.seen {
		c.minF, c.maxF, c.seen = f, f, true
		return
	}
	c.minF, c.maxF = min(c.minF, f), max(c.maxF, f)
}

func (c *colStats) str(s string) {
	if !c.seen {
		c.minS, c.maxS, c.seen = s, s, true
		return
	}
	if s < c.minS {
		c.minS = s
	}
	if s > c.maxS {
		c.maxS = s
	}
}

// strBytes is str for a byte slice; it copies b only when it becomes a bound.
func (c *colStats) strBytes(b []byte) {
	if !c.seen {
		c.minS, c.maxS, c.seen = string(b), string(b), true
		return
	}
	if string(b) < c.minS {
		c.minS = string(b)
	}
	if string(b) > c.maxS {
		c.maxS = string(b)
	}
}

func (c *colStats) decimal(d decimal128.Num) {
	if !c.seen {
		c.minD, c.maxD, c.seen = d, d, true
		return
	}
	if d.Cmp(c.minD) < 0 {
		c.minD = d
	}
	if d.Cmp(c.maxD) > 0 {
		c.maxD = d
	}
}

// bounds returns the JSON values of min and max; a nil value means "omit": a bound that
// might be wrong must never be written, because readers would skip matching files.
func (c *colStats) bounds() (lo, hi any) {
	if !c.minmax || !c.seen || c.unbounded {
		return nil, nil
	}
	switch c.leaf {
	case leafInt8, leafInt16, leafInt32, leafInt64:
		return c.minI, c.maxI
	case leafFloat, leafDouble:
		if c.nan {
			return nil, nil
		}
		return floatJSON(c.minF), floatJSON(c.maxF)
	case leafDate:
		return dateString(c.minI), dateString(c.maxI)
	case leafTimestamp, leafTimestampNTZ:
		// Stats are in milliseconds: round min down and max up so both stay bounds.
		ntz := c.leaf == leafTimestampNTZ
		return timestampString(floorDiv(c.minI, 1000), ntz), timestampString(-floorDiv(-c.maxI, 1000), ntz)
	case leafDecimal32, leafDecimal64, leafDecimalFixed:
		return json.Number(c.minD.String(c.scale)), json.Number(c.maxD.String(c.scale))
	case leafString:
		return stringMin(c.minS), stringMax(c.maxS)
	}
	return nil, nil
}

// floatJSON writes the exact double value of f; ±Inf has no JSON form and is omitted.
// A float32 is widened first so a reader comparing in double precision sees a true bound.
func floatJSON(f float64) any {
	if math.IsInf(f, 0) {
		return nil
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// dateString and timestampString give nil, an omitted bound, outside the years
// 0001 to 9999.
func dateString(days int64) any {
	if s, ok := deltatext.Date(days); ok {
		return s
	}
	return nil
}

func timestampString(millis int64, ntz bool) any {
	if s, ok := deltatext.StatsTimestamp(time.UnixMilli(millis), ntz); ok {
		return s
	}
	return nil
}

// stringMin truncates to a prefix, which is still a lower bound.
func stringMin(s string) any {
	if !utf8.ValidString(s) {
		return nil
	}
	if i := prefixEnd(s); i < len(s) {
		return s[:i]
	}
	return s
}

// stringMax truncates and appends U+10FFFF, which sorts after every continuation of the
// prefix except one starting with U+10FFFF itself; then the bound is omitted.
func stringMax(s string) any {
	if !utf8.ValidString(s) {
		return nil
	}
	i := prefixEnd(s)
	if i == len(s) {
		return s
	}
	if r, _ := utf8.DecodeRuneInString(s[i:]); r == maxCodePoint {
		return nil
	}
	return s[:i] + string(maxCodePoint)
}

// prefixEnd is the byte offset after the first stringPrefixLen code points.
func prefixEnd(s string) int {
	n := 0
	for i := range s {
		if n == stringPrefixLen {
			return i
		}
		n++
	}
	return len(s)
}

// fileStats renders the collected statistics of one file.
func fileStats(numRecords int64, leaves []*colStats, tight bool) (string, error) {
	st := deltalog.Stats{NumRecords: numRecords, MinValues: map[string]any{}, MaxValues: map[string]any{}, NullCount: map[string]any{}}
	for _, c := range leaves {
		setPath(st.NullCount, c.path, c.nulls)
		lo, hi := c.bounds()
		if lo != nil {
			setPath(st.MinValues, c.path, lo)
		}
		if hi != nil {
			setPath(st.MaxValues, c.path, hi)
		}
	}
	if tight {
		t := true
		st.TightBounds = &t
	}
	return st.JSON()
}

func setPath(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[path[len(path)-1]] = v
}

// parseStatsColumns reads delta.dataSkippingStatsColumns: comma-separated logical
// column paths, dotted for nested fields, with backticks quoting names that contain
// dots, commas or spaces.
func parseStatsColumns(s string) map[string]bool {
	out := map[string]bool{}
	var parts []string
	var cur strings.Builder
	quoted := false
	flush := func() {
		if p := strings.Join(parts, "."); p != "" || cur.Len() > 0 {
			parts = append(parts, strings.TrimSpace(cur.String()))
			out[strings.Join(parts, ".")] = true
		}
		parts, quoted = nil, false
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '`':
			quoted = !quoted
		case r == '.' && !quoted:
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		case r == ',' && !quoted:
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	delete(out, "")
	return out
}
