package deltalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// logDir is the transaction log directory, relative to the table root.
const logDir = "_delta_log/"

// commitPath returns the path of the commit file for version v.
func commitPath(v int64) string { return fmt.Sprintf("%s%020d.json", logDir, v) }

// versionPrefix is the listing position just before every file of version v.
func versionPrefix(v int64) string { return fmt.Sprintf("%s%020d", logDir, v) }

// logFileKind classifies a file in _delta_log.
type logFileKind int

const (
	kindOther logFileKind = iota
	kindCommit
	kindCheckpointClassic
	kindCheckpointMultiPart
	kindCheckpointV2
	kindChecksum
	kindCompacted
)

// logName is a parsed _delta_log file name.
type logName struct {
	kind    logFileKind
	version int64
	part    int // multi-part: 1-based part number
	parts   int // multi-part: number of parts
}

// parseLogName classifies the base name of a file in _delta_log. Names that match no
// pattern of the protocol (temp files, Hadoop .crc sidecars, _commits/...) are kindOther.
func parseLogName(name string) logName {
	if len(name) < 21 || name[20] != '.' {
		return logName{}
	}
	v, ok := parseVersion(name[:20])
	if !ok {
		return logName{}
	}
	rest := name[21:]
	switch {
	case rest == "json":
		return logName{kind: kindCommit, version: v}
	case rest == "crc":
		return logName{kind: kindChecksum, version: v}
	case rest == "checkpoint.parquet":
		return logName{kind: kindCheckpointClassic, version: v}
	case strings.HasPrefix(rest, "checkpoint."):
		return parseCheckpointSuffix(v, strings.TrimPrefix(rest, "checkpoint."))
	case strings.HasSuffix(rest, ".compacted.json"):
		if end, ok := parseVersion(strings.TrimSuffix(rest, ".compacted.json")); ok && end > v {
			return logName{kind: kindCompacted, version: v}
		}
	}
	return logName{}
}

func parseCheckpointSuffix(v int64, s string) logName {
	// Multi-part: %010d.%010d.parquet
	if body, ok := strings.CutSuffix(s, ".parquet"); ok && len(body) == 21 && body[10] == '.' {
		part, err1 := strconv.Atoi(body[:10])
		parts, err2 := strconv.Atoi(body[11:])
		if err1 == nil && err2 == nil && allDigits(body[:10]) && allDigits(body[11:]) &&
			part >= 1 && parts >= 1 && part <= parts {
			return logName{kind: kindCheckpointMultiPart, version: v, part: part, parts: parts}
		}
		return logName{}
	}
	// V2: <uuid>.json|parquet
	for _, ext := range []string{".json", ".parquet"} {
		if id, ok := strings.CutSuffix(s, ext); ok && isUUID(id) {
			return logName{kind: kindCheckpointV2, version: v}
		}
	}
	return logName{}
}

func parseVersion(s string) (int64, bool) {
	if len(s) != 20 || !allDigits(s) {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// commitFile is one commit in a listing.
type commitFile struct {
	version int64
	path    string
	modTime time.Time
}

// checkpointRef is one complete checkpoint: all of its files, parts in order.
type checkpointRef struct {
	version int64
	kind    logFileKind
	paths   []string
	modTime time.Time
}

// logListing is the classified content of _delta_log from some start version on.
type logListing struct {
	commits     []commitFile    // ascending by version
	checkpoints []checkpointRef // complete only; ascending by version
	other       []ObjectInfo    // checksums and compactions, for cleanup
}

// listLog lists _delta_log from version start (inclusive) on.
func listLog(ctx context.Context, s Store, start int64) (*logListing, error) {
	startAfter := ""
	if start > 0 {
		startAfter = versionPrefix(start)
	}
	var infos []ObjectInfo
	for oi, err := range s.List(ctx, logDir, startAfter) {
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", logDir, err)
		}
		infos = append(infos, oi)
	}
	return classifyLog(infos), nil
}

// classifyLog sorts listed objects into commits and complete checkpoints. Files that are
// not direct children of _delta_log or match no protocol pattern are ignored.
func classifyLog(infos []ObjectInfo) *logListing {
	ll := &logListing{}
	type partSet struct {
		paths   []string
		modTime time.Time
	}
	multi := map[[2]int64]*partSet{} // (version, parts) → paths by part
	for _, oi := range infos {
		base, ok := strings.CutPrefix(oi.Path, logDir)
		if !ok || strings.Contains(base, "/") {
			continue
		}
		n := parseLogName(base)
		switch n.kind {
		case kindCommit:
			ll.commits = append(ll.commits, commitFile{version: n.version, path: oi.Path, modTime: oi.ModTime})
		case kindCheckpointClassic, kindCheckpointV2:
			ll.checkpoints = append(ll.checkpoints, checkpointRef{version: n.version, kind: n.kind, paths: []string{oi.Path}, modTime: oi.ModTime})
		case kindCheckpointMultiPart:
			key := [2]int64{n.version, int64(n.parts)}
			ps := multi[key]
			if ps == nil {
				ps = &partSet{paths: make([]string, n.parts)}
				multi[key] = ps
			}
			ps.paths[n.part-1] = oi.Path
			ps.modTime = oi.ModTime
		case kindChecksum, kindCompacted:
			ll.other = append(ll.other, oi)
		}
	}
	for key, ps := range multi {
		if !slices.Contains(ps.paths, "") {
			ll.checkpoints = append(ll.checkpoints, checkpointRef{version: key[0], kind: kindCheckpointMultiPart, paths: ps.paths, modTime: ps.modTime})
		}
	}
	// Listing order is lexicographic, which equals numeric order thanks to zero-padding,
	// but sort anyway: the multi-part map has no order.
	slices.SortFunc(ll.commits, func(a, b commitFile) int { return cmpInt64(a.version, b.version) })
	slices.SortStableFunc(ll.checkpoints, func(a, b checkpointRef) int {
		if c := cmpInt64(a.version, b.version); c != 0 {
			return c
		}
		return checkpointPreference(a.kind) - checkpointPreference(b.kind)
	})
	return ll
}

// checkpointPreference orders checkpoints of one version; lower is tried first. The
// classic single file is the cheapest complete one; multi-part is deprecated.
func checkpointPreference(k logFileKind) int {
	switch k {
	case kindCheckpointClassic:
		return 0
	case kindCheckpointV2:
		return 1
	}
	return 2
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// latestVersion is the highest version with a commit or a checkpoint, or -1.
func (ll *logListing) latestVersion() int64 {
	v := int64(-1)
	if n := len(ll.commits); n > 0 {
		v = ll.commits[n-1].version
	}
	if n := len(ll.checkpoints); n > 0 {
		v = max(v, ll.checkpoints[n-1].version)
	}
	return v
}

// commit returns the commit file of version v, if listed.
func (ll *logListing) commit(v int64) (commitFile, bool) {
	i, ok := slices.BinarySearchFunc(ll.commits, v, func(c commitFile, v int64) int { return cmpInt64(c.version, v) })
	if !ok {
		return commitFile{}, false
	}
	return ll.commits[i], true
}

// checkpointsAtOrBefore returns the complete checkpoints with version ≤ v, newest (and
// preferred) first.
func (ll *logListing) checkpointsAtOrBefore(v int64) []checkpointRef {
	var out []checkpointRef
	for i := len(ll.checkpoints) - 1; i >= 0; i-- {
		if ll.checkpoints[i].version <= v {
			out = append(out, ll.checkpoints[i])
		}
	}
	// Within one version keep preference order (the loop above reversed it).
	slices.SortStableFunc(out, func(a, b checkpointRef) int {
		if c := cmpInt64(b.version, a.version); c != 0 {
			return c
		}
		return checkpointPreference(a.kind) - checkpointPreference(b.kind)
	})
	return out
}

// replayPlan is what is needed to build the snapshot at one version.
type replayPlan struct {
	version    int64
	checkpoint *checkpointRef // nil: replay from version 0
	commits    []commitFile   // checkpoint.version+1 .. version, contiguous
}

// ErrLogGap matches *LogGapError.
var ErrLogGap = errors.New("deltalog: gap in log versions")

// LogGapError reports a commit missing between a checkpoint (or version 0) and the target
// version; the table state there cannot be reconstructed.
type LogGapError struct {
	Missing int64
	Target  int64
}

// Error implements error.
func (e *LogGapError) Error() string {
	return fmt.Sprintf("deltalog: cannot reconstruct version %d: commit %s is missing", e.Target, commitPath(e.Missing))
}

// Unwrap makes errors.Is(err, ErrLogGap) true.
func (e *LogGapError) Unwrap() error { return ErrLogGap }

// VersionRangeError reports a requested version (or timestamp) outside the versions that
// can be reconstructed. Earliest is -1 when the table has no reconstructable version.
type VersionRangeError struct {
	Version   int64     // requested version, or -1 when a timestamp was requested
	Timestamp time.Time // requested timestamp, zero when a version was requested
	Earliest  int64
	Latest    int64
}

// Error implements error.
func (e *VersionRangeError) Error() string {
	what := "version " + strconv.FormatInt(e.Version, 10)
	if !e.Timestamp.IsZero() {
		what = "timestamp " + e.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("deltalog: %s is not available (versions %d..%d can be read)", what, e.Earliest, e.Latest)
}

// Unwrap makes errors.Is(err, ErrNotExist) true.
func (e *VersionRangeError) Unwrap() error { return ErrNotExist }

// planFor picks the newest complete checkpoint ≤ v (skipping any in skip) and the commits
// after it. Missing commits are a *LogGapError.
func (ll *logListing) planFor(v int64, skip func(checkpointRef) bool) (replayPlan, error) {
	if _, ok := ll.commit(v); !ok && !ll.hasCheckpointAt(v) {
		return replayPlan{}, &VersionRangeError{Version: v, Earliest: ll.earliestVersion(), Latest: ll.latestVersion()}
	}
	plan := replayPlan{version: v}
	from := int64(0)
	for _, cp := range ll.checkpointsAtOrBefore(v) {
		if skip != nil && skip(cp) {
			continue
		}
		plan.checkpoint = &cp
		from = cp.version + 1
		break
	}
	for next := from; next <= v; next++ {
		c, ok := ll.commit(next)
		if !ok {
			return replayPlan{}, &LogGapError{Missing: next, Target: v}
		}
		plan.commits = append(plan.commits, c)
	}
	return plan, nil
}

func (ll *logListing) hasCheckpointAt(v int64) bool {
	for _, cp := range ll.checkpoints {
		if cp.version == v {
			return true
		}
	}
	return false
}

// earliestVersion is the oldest version that can be reconstructed from this listing (a
// checkpoint, or version 0), or -1.
func (ll *logListing) earliestVersion() int64 {
	if _, ok := ll.commit(0); ok {
		return 0
	}
	if len(ll.checkpoints) > 0 {
		return ll.checkpoints[0].version
	}
	return -1
}
