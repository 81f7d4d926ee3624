package main

import (
	"bufio"
	"context"
	"encoding/json"
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
				t, err := sf.openTable(ctx, loc)
				if err != nil {
					return err
				}
				entries, err := readHistory(ctx, t.Store(), *limit)
				if err != nil {
					return fmt.Errorf("reading history of %s: %w", loc, err)
				}
				if len(entries) == 0 {
					return fmt.Errorf("%s is not a Delta table (no commits in _delta_log)", loc)
				}
				if *asJSON {
					enc := json.NewEncoder(e.stdout)
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

// historyEntry is one row of DESCRIBE HISTORY.
type historyEntry struct {
	Version             int64             `json:"version"`
	Timestamp           time.Time         `json:"timestamp"`
	Operation           string            `json:"operation"`
	OperationParameters map[string]string `json:"operationParameters,omitempty"`
	OperationMetrics    map[string]string `json:"operationMetrics,omitempty"`
	ReadVersion         *int64            `json:"readVersion,omitempty"`
	IsolationLevel      string            `json:"isolationLevel,omitempty"`
	IsBlindAppend       *bool             `json:"isBlindAppend,omitempty"`
	EngineInfo          string            `json:"engineInfo,omitempty"`
}

// commitVersion parses "_delta_log/00000000000000000012.json".
func commitVersion(p string) (int64, bool) {
	name, ok := strings.CutPrefix(p, "_delta_log/")
	if !ok || len(name) != 25 || !strings.HasSuffix(name, ".json") {
		return 0, false
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	return v, err == nil
}

// readHistory reads the commitInfo of the newest limit commits (0: all) still in the log.
func readHistory(ctx context.Context, s deltalog.Store, limit int) ([]historyEntry, error) {
	type commitFile struct {
		version int64
		info    deltalog.ObjectInfo
	}
	var files []commitFile
	for o, err := range s.List(ctx, "_delta_log/", "") {
		if err != nil {
			return nil, err
		}
		if v, ok := commitVersion(o.Path); ok {
			files = append(files, commitFile{v, o})
		}
	}
	slices.Reverse(files) // newest first
	if limit > 0 && len(files) > limit {
		files = files[:limit]
	}
	out := make([]historyEntry, 0, len(files))
	for _, f := range files {
		ci, err := readCommitInfo(ctx, s, f.info.Path)
		if err != nil {
			return nil, err
		}
		h := historyEntry{Version: f.version, Timestamp: f.info.ModTime.UTC()}
		if ci != nil {
			switch {
			case ci.InCommitTimestamp != nil:
				h.Timestamp = time.UnixMilli(*ci.InCommitTimestamp).UTC()
			case ci.Timestamp != nil:
				h.Timestamp = time.UnixMilli(*ci.Timestamp).UTC()
			}
			h.Operation, h.OperationParameters, h.OperationMetrics = ci.Operation, ci.OperationParameters, ci.OperationMetrics
			h.ReadVersion, h.IsolationLevel, h.IsBlindAppend, h.EngineInfo = ci.ReadVersion, ci.IsolationLevel, ci.IsBlindAppend, ci.EngineInfo
		}
		out = append(out, h)
	}
	return out, nil
}

func readCommitInfo(ctx context.Context, s deltalog.Store, p string) (*deltalog.CommitInfo, error) {
	rc, err := s.Get(ctx, p)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		a, ok, err := deltalog.ParseLogLine(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if ok && a.CommitInfo != nil {
			return a.CommitInfo, nil
		}
	}
	return nil, sc.Err()
}

func printHistory(e *env, entries []historyEntry) error {
	tw := newTextTable("VERSION", "TIMESTAMP", "OPERATION", "PARAMETERS", "METRICS")
	for _, h := range entries {
		tw.add(strconv.FormatInt(h.Version, 10), h.Timestamp.Format("2006-01-02 15:04:05.000Z07:00"),
			h.Operation, kvList(h.OperationParameters), kvList(h.OperationMetrics))
	}
	return tw.write(e.stdout)
}

// kvList renders a map as "k=v, k=v" in key order.
func kvList(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ", ")
}
