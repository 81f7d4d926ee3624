package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// HistoryMode is the history setting of a table (ADR 0046): false (none),
// true (a history table beside the current-state table) or only (the
// history table instead of it, at the table's own path).
type HistoryMode string

// History modes; the zero value keeps no history table.
const (
	HistoryOff    HistoryMode = ""
	HistoryBeside HistoryMode = "true"
	HistoryOnly   HistoryMode = "only"
)

// Keeps reports whether the table has a history table, beside it or alone.
func (h HistoryMode) Keeps() bool { return h == HistoryBeside || h == HistoryOnly }

// Only reports whether the history table is the table's only Delta table.
func (h HistoryMode) Only() bool { return h == HistoryOnly }

// UnmarshalYAML takes true, false or only. A bad value is a type error whose
// message the config decoder reports with the field's path and line.
func (h *HistoryMode) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true", "True", "TRUE":
			*h = HistoryBeside
			return nil
		case "false", "False", "FALSE":
			*h = HistoryOff
			return nil
		case string(HistoryOnly):
			*h = HistoryOnly
			return nil
		}
	}
	return &yaml.TypeError{Errors: []string{fmt.Sprintf(
		"%q is not true, false or only (true: a history table beside the table; only: the history table instead of it)", n.Value)}}
}

// MarshalYAML writes true, false or only.
func (h HistoryMode) MarshalYAML() (any, error) {
	switch h {
	case HistoryBeside:
		return true, nil
	case HistoryOnly:
		return string(HistoryOnly), nil
	}
	return false, nil
}
