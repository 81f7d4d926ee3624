package deltatext

import (
	"math"
	"strconv"
	"strings"
)

// PartitionFloat formats a float (bits 32) or double (bits 64) partition value
// in the shapes of Java's Double.toString that Spark writes for ordinary
// values: "1.0", "-0.5", "1e+21", "NaN", "Infinity", "-Infinity".
func PartitionFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
