package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// An index manifest says which runs held the table's keys at one table
// version (ADR 0034). It is written only after that version's commit
// landed and only when the in-memory table is empty, so the runs it names
// are the whole index at its version: never ahead of the log. Opening
// takes the newest manifest at or below the table's version and catches up
// from the files the manifest lists as live.
type indexManifest struct {
	Format  int   `json:"format"`
	Version int64 `json:"version"`
	// Files is the path of each file id the runs name; "" for a file no
	// longer live.
	Files []string `json:"files"`
	// Runs are the run files, newest first.
	Runs []string `json:"runs"`
	// Live are the table's live files at Version.
	Live []manifestFile `json:"live"`
	// Redirects say where rows that runs name moved (format 2).
	Redirects []manifestRedirect `json:"redirects,omitempty"`
}

// manifestFile is a live file: its id and its deletion vector.
type manifestFile struct {
	ID      uint32 `json:"id"`
	DV      string `json:"dv,omitempty"`
	Deleted int64  `json:"deleted,omitempty"`
}

const (
	manifestFormat = 1
	// manifestFormatRedirects is a manifest with redirects: a build that
	// does not follow them must not read its runs.
	manifestFormatRedirects = 2
	manifestPrefix          = "manifest-"
	// foreignGrace is how old another writer's files must be before this
	// one deletes them: a live writer names its new runs in a manifest
	// well within it.
	foreignGrace = time.Hour
)

func manifestName(version int64, writer string) string {
	return fmt.Sprintf("%s%020d-%s.json", manifestPrefix, version, writer)
}

// parseManifestName returns the version and writer of a manifest file name.
func parseManifestName(name string) (int64, string, bool) {
	rest, ok := strings.CutPrefix(name, manifestPrefix)
	if !ok || !strings.HasSuffix(rest, ".json") || len(rest) < 22 {
		return 0, "", false
	}
	v, err := strconv.ParseInt(rest[:20], 10, 64)
	if err != nil || rest[20] != '-' {
		return 0, "", false
	}
	return v, strings.TrimSuffix(rest[21:], ".json"), true
}

// runWriter returns the writer of a run file name.
func runWriter(name string) string {
	w, _, _ := strings.Cut(name, "-")
	return w
}

// saveManifest flushes the in-memory table and writes the manifest of the
// index at snap's version, then deletes what no manifest needs any more.
func (x *keyIndex) saveManifest(snap *deltalog.Snapshot) error {
	if err := x.flush(); err != nil {
		return fmt.Errorf("saving key index: %w", err)
	}
	r := x.runs
	m := indexManifest{Format: manifestFormat, Version: snap.Version(), Runs: r.names()}
	for _, add := range snap.Files() {
		id, ok := x.fileIDs[add.Path]
		if !ok {
			// A file with no live row is in no entry: give it an id so
			// that a catch-up does not read it as new.
			id = x.fileID(add.Path)
		}
		f := manifestFile{ID: id}
		if dv := add.DeletionVector; dv != nil {
			f.DV, f.Deleted = dv.UniqueID(), dv.Cardinality
		}
		m.Live = append(m.Live, f)
	}
	m.Files = x.files // after the ids given above
	var err error
	if m.Redirects, err = x.manifestRedirects(); err != nil {
		return fmt.Errorf("saving key index: %w", err)
	}
	if len(m.Redirects) > 0 {
		m.Format = manifestFormatRedirects
	}
	js, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("saving key index: %w", err)
	}
	name := manifestName(m.Version, r.writer)
	if err := writeFileSynced(r.path, name, js); err != nil {
		return fmt.Errorf("saving key index: %w", err)
	}
	r.collect(name, m)
	return nil
}

// writeFileSynced writes name in dir through a temporary file and a
// rename, so that a reader sees all of it or nothing, and syncs both.
func writeFileSynced(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, "."+name+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// collect deletes, after the manifest kept was written, the older
// manifests and the runs no remaining manifest names: this writer's at
// once, other writers' once foreignGrace old (a writer that shares the
// directory may still be using them). It is best effort: what it leaves is
// deleted by a later call.
func (r *indexRuns) collect(kept string, m indexManifest) {
	entries, err := os.ReadDir(r.path)
	if err != nil {
		return
	}
	deletable := func(e os.DirEntry, writer string) bool {
		if writer == r.writer {
			return true
		}
		fi, err := e.Info()
		return err == nil && time.Since(fi.ModTime()) > foreignGrace
	}
	named := map[string]bool{}
	for _, n := range m.Runs {
		named[n] = true
	}
	var runs []os.DirEntry
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".run") {
			runs = append(runs, e)
			continue
		}
		if tmp, ok := strings.CutPrefix(strings.TrimSuffix(name, ".tmp"), "."); ok && tmp != name {
			// A manifest whose write a kill cut short.
			if _, writer, ok := parseManifestName(tmp); ok && writer != r.writer && deletable(e, writer) {
				os.Remove(filepath.Join(r.path, name))
			}
			continue
		}
		v, writer, ok := parseManifestName(name)
		if !ok || name == kept {
			continue
		}
		if v <= m.Version && deletable(e, writer) {
			os.Remove(filepath.Join(r.path, name))
			continue
		}
		// A manifest kept keeps its runs.
		other, err := readManifest(r.path, name)
		if err != nil {
			continue
		}
		for _, n := range other.Runs {
			named[n] = true
		}
	}
	for _, e := range runs {
		if !named[e.Name()] && deletable(e, runWriter(e.Name())) {
			os.Remove(filepath.Join(r.path, e.Name()))
		}
	}
}

func readManifest(dir, name string) (indexManifest, error) {
	var m indexManifest
	js, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(js, &m); err != nil {
		return m, fmt.Errorf("manifest %s: %w", name, err)
	}
	if m.Format != manifestFormat && m.Format != manifestFormatRedirects {
		return m, fmt.Errorf("manifest %s: format %d, want %d or %d", name, m.Format, manifestFormat, manifestFormatRedirects)
	}
	return m, nil
}

// errNoManifest means the directory has no manifest at or below the
// table's version: the index is built from the data files.
var errNoManifest = errors.New("no key index manifest at or below the table's version")

// newestManifest returns the newest manifest at or below version, of any
// writer.
func newestManifest(dir string, version int64) (string, indexManifest, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", indexManifest{}, err
	}
	var names []string
	for _, e := range entries {
		if v, _, ok := parseManifestName(e.Name()); ok && v <= version {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return "", indexManifest{}, errNoManifest
	}
	// The zero-padded version makes the names sort by version.
	name := slices.Max(names)
	m, err := readManifest(dir, name)
	return name, m, err
}
