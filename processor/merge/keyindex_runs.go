package merge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/merge/keyrun"
)

// indexRuns is the part of a key index kept on local disk (ADR 0034): the
// entries flushed from the in-memory table, in sorted runs, newest first.
//
// Runs are never updated. An entry of a run is the key's row when the run
// was written; the in-memory table holds every change since. A lookup that
// the table misses takes the first run holding the key, and that entry
// counts only while its file is live and its row not deleted (liveCheck): a
// row replaced or deleted since is always marked so in the table's log,
// which is what the index answers to, so runs need no delete markers.
type indexRuns struct {
	*indexDir
	runs []*diskRun // newest first
	// inRuns[file id] says a run may name rows of that file, itself or
	// through a redirect; a move of one then gets a redirect.
	inRuns []bool
}

// indexDir is where a Sink keeps its index runs and manifests.
type indexDir struct {
	path string
	// writer names the files this Sink writes, apart from those of other
	// processes that share the directory.
	writer string
	// memKeys is how many keys the in-memory table holds before a flush.
	memKeys int
	seq     int
}

// diskRun is one open run file.
type diskRun struct {
	name string
	f    *os.File
	*keyrun.Run
}

// runValueWidth is a run entry's value: file id, row and position.
const runValueWidth = 4 + 4 + codecs.PositionLen

// runBloomBits is the bloom filter's bits per key: 0.8% false positives.
const runBloomBits = 10

func appendRunValue(dst []byte, l rowLoc) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, l.file)
	dst = binary.LittleEndian.AppendUint32(dst, l.row)
	return l.pos.AppendBinary(dst)
}

func decodeRunValue(v []byte) (rowLoc, error) {
	pos, err := codecs.PositionFromBinary(v[8:])
	if err != nil {
		return rowLoc{}, fmt.Errorf("%w: %v", keyrun.ErrCorrupt, err)
	}
	return rowLoc{file: binary.LittleEndian.Uint32(v), row: binary.LittleEndian.Uint32(v[4:]), pos: pos}, nil
}

func (r *indexRuns) markInRuns(id uint32) {
	if int(id) >= len(r.inRuns) {
		r.inRuns = append(r.inRuns, make([]bool, int(id)+1-len(r.inRuns))...)
	}
	r.inRuns[id] = true
}

func (r *indexRuns) holds(id uint32) bool { return int(id) < len(r.inRuns) && r.inRuns[id] }

// openRun opens a run file of the directory.
func (r *indexRuns) openRun(name string) (*diskRun, error) {
	f, err := os.Open(filepath.Join(r.path, name))
	if err != nil {
		return nil, fmt.Errorf("opening key run %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err == nil {
		var run *keyrun.Run
		if run, err = keyrun.Open(f, fi.Size()); err == nil {
			return &diskRun{name: name, f: f, Run: run}, nil
		}
	}
	f.Close()
	return nil, fmt.Errorf("opening key run %s: %w", name, err)
}

// writeRun writes a run file from add, which adds the entries in key order,
// syncs it and opens it.
func (r *indexRuns) writeRun(keys int, add func(w *keyrun.Writer) error) (*diskRun, error) {
	name := fmt.Sprintf("%s-%06d.run", r.writer, r.seq)
	r.seq++
	path := filepath.Join(r.path, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("writing key run: %w", err)
	}
	w := keyrun.NewWriter(f, runValueWidth, keys, runBloomBits)
	err = add(w)
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("writing key run %s: %w", name, err)
	}
	return r.openRun(name)
}

// close closes the open run files.
// names returns the runs' file names, newest first, as a manifest lists them.
func (r *indexRuns) names() []string {
	names := make([]string, 0, len(r.runs))
	for _, run := range r.runs {
		names = append(names, run.name)
	}
	return names
}

func (r *indexRuns) close() {
	for _, run := range r.runs {
		run.f.Close()
	}
	r.runs = nil
}

// lookupParallel is the batch size from which lookups are spread over the
// cores: each lookup is a block read, mostly a system call.
const lookupParallel = 2048

// lookup returns, for each of keys (sorted), the newest run's entry and
// whether a run holds the key. Large batches are split in key ranges over
// the cores.
func (r *indexRuns) lookup(keys [][]byte) ([]rowLoc, []bool, error) {
	locs, has := make([]rowLoc, len(keys)), make([]bool, len(keys))
	parts := 1
	if len(keys) >= lookupParallel {
		parts = runtime.GOMAXPROCS(0)
	}
	var g errgroup.Group
	for p := range parts {
		lo, hi := p*len(keys)/parts, (p+1)*len(keys)/parts
		g.Go(func() error { return r.lookupRange(keys[lo:hi], locs[lo:hi], has[lo:hi]) })
	}
	return locs, has, g.Wait()
}

// lookupRange fills locs and has for keys (sorted), newest run first.
func (r *indexRuns) lookupRange(keys [][]byte, locs []rowLoc, has []bool) error {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	var sub [][]byte
	for _, run := range r.runs {
		if len(idx) == 0 {
			break
		}
		sub = sub[:0]
		for _, i := range idx {
			sub = append(sub, keys[i])
		}
		var err error
		lerr := run.Lookup(sub, func(j int, v []byte) {
			if err == nil {
				locs[idx[j]], err = decodeRunValue(v)
				has[idx[j]] = true
			}
		})
		if err == nil {
			err = lerr
		}
		if err != nil {
			return runError(run, err)
		}
		idx = slices.DeleteFunc(idx, func(i int) bool { return has[i] })
	}
	return nil
}

// flush writes the in-memory table of x to a new run and empties it, then
// merges runs as compactRuns says.
func (x *keyIndex) flush() error {
	r := x.runs
	if x.keys.len() == 0 {
		return nil
	}
	type entry struct {
		key string
		loc rowLoc
	}
	entries := make([]entry, 0, x.keys.len())
	for k, loc := range x.keys.all() {
		entries = append(entries, entry{k, loc})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	var v []byte
	run, err := r.writeRun(len(entries), func(w *keyrun.Writer) error {
		for _, e := range entries {
			v = appendRunValue(v[:0], e.loc)
			if err := w.Add([]byte(e.key), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range entries {
		r.markInRuns(e.loc.file)
	}
	r.runs = append([]*diskRun{run}, r.runs...)
	x.keys = newKeyTable()
	return x.compactRuns()
}

// compactRuns merges the newest runs while the next older one is no more
// than twice their size, so that a table of n keys has O(log n) runs and
// each entry is rewritten O(log n) times. A merge that reaches the oldest
// run drops the entries of files no longer live and frees their ids.
func (x *keyIndex) compactRuns() error {
	r := x.runs
	k, total := 1, r.runs[0].Len()
	for k < len(r.runs) && (r.runs[k].Len() <= 2*total || len(x.redirects) > maxRedirects) {
		total += r.runs[k].Len()
		k++
	}
	// Past maxRedirects, k reaches every run, even a single one.
	if k == 1 && len(x.redirects) <= maxRedirects {
		return nil
	}
	full := k == len(r.runs)
	srcs := make([]*keyrun.Run, k)
	for i := range k {
		srcs[i] = r.runs[i].Run
	}
	var used []bool
	merged, err := r.writeRun(total, func(w *keyrun.Writer) error {
		if !full {
			return keyrun.Merge(w, nil, srcs...)
		}
		// The entries of dead files are dropped and those of moved files
		// follow their redirects, which then have no entry left to serve.
		used = make([]bool, len(x.files))
		var out []byte
		return keyrun.Merge(w, func(v []byte) ([]byte, bool) {
			loc := rowLoc{file: binary.LittleEndian.Uint32(v), row: binary.LittleEndian.Uint32(v[4:])}
			loc, ok := x.follow(loc)
			if !ok || int(loc.file) >= len(x.files) || x.files[loc.file] == "" {
				return nil, false
			}
			used[loc.file] = true
			if len(x.redirects) == 0 {
				return v, true
			}
			out = binary.LittleEndian.AppendUint32(out[:0], loc.file)
			out = binary.LittleEndian.AppendUint32(out, loc.row)
			return append(out, v[8:]...), true
		}, srcs...)
	})
	if err != nil {
		return fmt.Errorf("compacting key runs: %w", err)
	}
	// The files merged away are deleted once no manifest names them
	// (collect).
	for _, run := range r.runs[:k] {
		run.f.Close()
	}
	r.runs = append([]*diskRun{merged}, r.runs[k:]...)
	if full {
		// Ids of dead files that no run names any more are free again.
		x.redirects = nil
		r.inRuns = used
		free := map[uint32]bool{}
		for _, id := range x.free {
			free[id] = true
		}
		for id, path := range x.files {
			if path == "" && !used[id] && !free[uint32(id)] {
				x.free = append(x.free, uint32(id))
			}
		}
	}
	return nil
}

// allLive calls fn for every key with a live row: those of the in-memory
// table, then those of the runs it does not hold whose entries check finds
// live. It reads every run: O(table), for truncates.
func (x *keyIndex) allLive(check *liveCheck, fn func(key string, loc rowLoc) error) error {
	for k, loc := range x.keys.all() {
		if err := fn(k, loc); err != nil {
			return err
		}
	}
	if !x.onDisk() {
		return nil
	}
	srcs := make([]*keyrun.Run, len(x.runs.runs))
	for i, run := range x.runs.runs {
		srcs[i] = run.Run
	}
	m := keyrun.NewMerged(srcs...)
	for m.Next() {
		key := string(m.Key())
		if _, ok := x.keys.get(key); ok {
			continue
		}
		loc, err := decodeRunValue(m.Value())
		if err != nil {
			return err
		}
		loc, ok := x.follow(loc)
		if !ok {
			continue
		}
		live, err := check.live(loc)
		if err != nil {
			return err
		}
		if live {
			if err := fn(key, loc); err != nil {
				return err
			}
		}
	}
	if err := m.Err(); err != nil {
		return fmt.Errorf("reading key runs: %w", err)
	}
	return nil
}

// corruptRunError is a run that failed its checks when read: the Sink
// sets it aside and rebuilds the index.
type corruptRunError struct {
	path string
	err  error
}

func (e *corruptRunError) Error() string { return fmt.Sprintf("key run %s: %v", e.path, e.err) }
func (e *corruptRunError) Unwrap() error { return e.err }

// runError wraps an error reading run, typed when the run is corrupt.
func runError(run *diskRun, err error) error {
	if errors.Is(err, keyrun.ErrCorrupt) {
		return &corruptRunError{path: run.f.Name(), err: err}
	}
	return fmt.Errorf("reading key run %s: %w", run.name, err)
}
