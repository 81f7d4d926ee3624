package merge

import "github.com/cdc2delta/cdc2delta/codecs"

// opValue is an operation as the _cdc_op column's value. A string held in
// an interface is allocated per row, unless it is a constant: the known
// operations are.
func opValue(op codecs.Op) any {
	switch op {
	case codecs.OpCreate:
		return "c"
	case codecs.OpUpdate:
		return "u"
	case codecs.OpDelete:
		return "d"
	case codecs.OpRead:
		return "r"
	case codecs.OpTruncate:
		return "t"
	case codecs.OpTombstone:
		return "-"
	}
	return string(op)
}

// opText is opValue as a string.
func opText(op codecs.Op) string {
	switch op {
	case codecs.OpCreate:
		return "c"
	case codecs.OpUpdate:
		return "u"
	case codecs.OpDelete:
		return "d"
	case codecs.OpRead:
		return "r"
	case codecs.OpTruncate:
		return "t"
	case codecs.OpTombstone:
		return "-"
	}
	return string(rune(op))
}
