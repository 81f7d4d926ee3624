package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func historyCommand() command {
	return command{
		name:    "history",
		args:    "TABLE",
		summary: "show the table's commits, newest first (DESCRIBE HISTORY)",
		example: "cdc2delta history --limit 5 ./tables/sales/dbo/orders\ncdc2delta history --json s3://lake/sales/dbo/orders | jq .operationMetrics",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			limit := fs.Int("limit", 0, "show only the newest N commits (0: all)")
			asJSON := fs.Bool("json", false, "print one JSON object per commit")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				if *limit < 0 {
					return usagef("--limit must not be negative")
				}
				// History reads no data file and writes nothing: it shows a table
				// that other commands refuse for its absolute paths.
				t, err := sf.openReader(ctx, loc)
				if err != nil {
					return err
				}
				entries, err := readHistory(ctx, t, *limit)
				if errors.Is(err, deltalog.ErrNotExist) {
					return notATable(loc)
				}
				if err != nil {
					return fmt.Errorf("reading history of %s: %w", loc, err)
				}
				if *asJSON {
					enc := json.NewEncoder(e.stdout)
					enc.SetEscapeHTML(false) // predicates print as stored: "a < 5", not "a \u003c 5"
					for _, h := range entries {
						if err := enc.Encode(h); err != nil {
							return err
						}
					}
					return nil
				}
				return printHistory(e, entries)
			}
		},
	}
}

// historyEntry is one row of DESCRIBE HISTORY, its fields in Spark's column order.
// Timestamp is the commit time --timestamp resolves (deltalog.Table.History).
// Parameters and metrics keep their stored JSON types (see deltalog.OperationValues).
type historyEntry struct {
	Version             int64                    `json:"version"`
	Timestamp           time.Time                `json:"timestamp"`
	UserID              string                   `json:"userId,omitempty"`
	UserName            string                   `json:"userName,omitempty"`
	Operation           string                   `json:"operation"`
	OperationParameters deltalog.OperationValues `json:"operationParameters,omitempty"`
	Job                 json.RawMessage          `json:"job,omitempty"`
	Notebook            json.RawMessage          `json:"notebook,omitempty"`
	ClusterID           string                   `json:"clusterId,omitempty"`
	ReadVersion         *int64                   `json:"readVersion,omitempty"`
	IsolationLevel      string                   `json:"isolationLevel,omitempty"`
	IsBlindAppend       *bool                    `json:"isBlindAppend,omitempty"`
	OperationMetrics    deltalog.OperationValues `json:"operationMetrics,omitempty"`
	UserMetadata        string                   `json:"userMetadata,omitempty"`
	EngineInfo          string                   `json:"engineInfo,omitempty"`
}

// readHistory reads the newest limit commits (0: all) still in the log, each with
// the commit time time travel (--timestamp) resolves.
func readHistory(ctx context.Context, t *deltalog.Table, limit int) ([]historyEntry, error) {
	commits, err := t.History(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]historyEntry, 0, len(commits))
	for _, c := range commits {
		h := historyEntry{Version: c.Version, Timestamp: c.Timestamp}
		if ci := c.Info; ci != nil {
			h.UserID, h.UserName, h.Operation, h.OperationParameters = ci.UserID, ci.UserName, ci.Operation, ci.OperationParameters
			h.Job, h.Notebook, h.ClusterID = ci.Job, ci.Notebook, ci.ClusterID
			h.ReadVersion, h.IsolationLevel, h.IsBlindAppend = ci.ReadVersion, ci.IsolationLevel, ci.IsBlindAppend
			h.OperationMetrics, h.UserMetadata, h.EngineInfo = ci.OperationMetrics, ci.UserMetadata, ci.EngineInfo
		}
		out = append(out, h)
	}
	return out, nil
}

// historyColumn is one column of the text output; optional columns only appear when
// some commit shown has a value for them (Databricks fills them, Spark and delta-rs
// mostly do not). Parameters and metrics wrap over several lines.
type historyColumn struct {
	header   string
	optional bool
	wrap     bool
	cell     func(h historyEntry) string
}

func printHistory(e *env, entries []historyEntry) error {
	all := []historyColumn{
		{header: "VERSION", cell: func(h historyEntry) string { return strconv.FormatInt(h.Version, 10) }},
		{header: "TIMESTAMP", cell: func(h historyEntry) string { return h.Timestamp.Format("2006-01-02 15:04:05.000Z07:00") }},
		{header: "USER", optional: true, cell: func(h historyEntry) string { return cmp.Or(h.UserName, h.UserID) }},
		{header: "OPERATION", cell: func(h historyEntry) string { return h.Operation }},
		{header: "PARAMETERS", wrap: true, cell: func(h historyEntry) string { return kvList(h.OperationParameters) }},
		{header: "JOB", optional: true, cell: func(h historyEntry) string { return jsonText(h.Job) }},
		{header: "NOTEBOOK", optional: true, cell: func(h historyEntry) string { return jsonText(h.Notebook) }},
		{header: "CLUSTER", optional: true, cell: func(h historyEntry) string { return h.ClusterID }},
		{header: "USER METADATA", optional: true, cell: func(h historyEntry) string { return h.UserMetadata }},
		{header: "METRICS", wrap: true, cell: func(h historyEntry) string { return kvList(h.OperationMetrics) }},
	}
	var cols []historyColumn
	for _, c := range all {
		if !c.optional || slices.ContainsFunc(entries, func(h historyEntry) bool { return c.cell(h) != "" }) {
			cols = append(cols, c)
		}
	}
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.header
	}
	tw := newTextTable(header...)
	for _, h := range entries {
		cells := make([][]string, len(cols))
		for i, c := range cols {
			if c.wrap {
				cells[i] = wrapList(c.cell(h), historyCellWidth)
			} else {
				cells[i] = []string{c.cell(h)}
			}
		}
		tw.addLines(cells...)
	}
	return tw.write(e.stdout)
}

// historyCellWidth is where parameters and metrics wrap, so a MERGE's predicates and
// metrics do not make one line of hundreds of characters.
const historyCellWidth = 72

// kvList renders parameters or metrics as "k=v, k=v" in key order, each value as
// deltalog.OperationValues.Text gives it.
func kvList(m deltalog.OperationValues) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + unescapeHTML(m.Text(k))
	}
	return strings.Join(parts, ", ")
}

// unescapeHTML undoes Go's HTML escaping of <, > and & (\u003c, \u003e, \u0026) in a
// value that is JSON text, as older cdc2delta commits stored MERGE predicates: the
// JSON means the same, and the predicate reads as written.
func unescapeHTML(v string) string {
	if !strings.Contains(v, `\u00`) || !json.Valid([]byte(v)) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			if r, ok := htmlEscapes[strings.ToLower(v[i:min(i+6, len(v))])]; ok {
				b.WriteByte(r)
				i += 5
				continue
			}
			b.WriteString(v[i : i+2]) // another escape, kept whole (so \\u003e stays)
			i++
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

var htmlEscapes = map[string]byte{`\u003c`: '<', `\u003e`: '>', `\u0026`: '&'}

// wrapList breaks a "k=v, k=v" list into lines of about width characters, at the
// items and, inside a long item, between the objects of a JSON array.
func wrapList(s string, width int) []string {
	if s == "" {
		return []string{""}
	}
	var pieces []string
	for _, item := range strings.SplitAfter(s, ", ") {
		if len(item) <= width {
			pieces = append(pieces, item)
			continue
		}
		pieces = append(pieces, strings.SplitAfter(item, "},")...)
	}
	var lines []string
	cur := ""
	for _, p := range pieces {
		if cur != "" && len(cur)+len(strings.TrimRight(p, " ")) > width {
			lines = append(lines, strings.TrimRight(cur, " "))
			cur = ""
		}
		cur += p
	}
	return append(lines, strings.TrimRight(cur, " "))
}

// jsonText renders a job or notebook object like parameters ("jobId=1, jobName=x") and
// any other JSON value as its text.
func jsonText(raw json.RawMessage) string {
	var obj deltalog.OperationValues
	if json.Unmarshal(raw, &obj) == nil && obj != nil {
		return kvList(obj)
	}
	return string(raw)
}
