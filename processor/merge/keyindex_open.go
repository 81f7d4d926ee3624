package merge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// newIndexDir prepares dir for a Sink's index runs and manifests.
func newIndexDir(dir string, memKeys int) (*indexDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("key index directory: %w", err)
	}
	// No '-' in the writer: file names split on it.
	id := uuid.New()
	return &indexDir{path: dir, writer: fmt.Sprintf("%x", id[:6]), memKeys: memKeys}, nil
}

// newIndex returns an empty key index, on disk when the Sink has a
// directory for it.
func (s *Sink) newIndex() *keyIndex {
	if s.indexDir == nil {
		return newKeyIndex(nil)
	}
	return newKeyIndex(&indexRuns{indexDir: s.indexDir})
}

// openIndex returns the key index of st's snapshot. On disk, it opens the
// newest manifest at or below the snapshot's version and catches up from
// the files it lists; without a usable one it builds the index from the
// data files, with progress logged, and saves it.
func (s *Sink) openIndex(ctx context.Context, st *tableState) (*keyIndex, error) {
	start := time.Now()
	if s.indexDir != nil {
		name, m, err := newestManifest(s.indexDir.path, st.snap.Version())
		if err == nil {
			var x *keyIndex
			x, err = indexFromManifest(ctx, s.opts.Store, st, &indexRuns{indexDir: s.indexDir}, m, s.log.Warn)
			if err == nil {
				s.log.Info("key index opened", "manifest", name, "version", st.snap.Version(), "runs", len(m.Runs),
					"duration", time.Since(start).Round(time.Millisecond))
				// A catch-up long enough to write runs (a bulk load, another
				// writer's commits) is saved at once: otherwise every open
				// until the next full flush, a kill's above all, repeats it.
				if !slices.Equal(x.runs.names(), m.Runs) {
					if err := x.saveManifest(st.snap); err != nil {
						s.log.Warn("the key index caught up but was not saved; the next open catches up again", "err", err)
					}
				}
				return x, nil
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !errors.Is(err, errNoManifest) {
			s.log.Warn("rebuilding the key index from the data files", "manifest", name, "reason", err)
		}
	}
	x, err := buildKeyIndex(ctx, s.opts.Store, st, s.newIndex().runs, s.log)
	if err != nil {
		return nil, err
	}
	if x.runs != nil {
		if err := x.saveManifest(st.snap); err != nil {
			s.log.Warn("the key index is built but not saved; the next open builds it again", "err", err)
		}
	}
	return x, nil
}

// indexFromManifest opens the runs of m and catches up from the version
// of m to st's snapshot: files new since are read, files gone die with
// their entries (liveCheck). A deletion vector that holds fewer rows than
// at m's version (a RESTORE) gives errCatchUpUnsupported.
func indexFromManifest(ctx context.Context, store deltalog.Store, st *tableState, r *indexRuns, m indexManifest, log func(string, ...any)) (*keyIndex, error) {
	x := newKeyIndex(r)
	for _, name := range m.Runs {
		run, err := r.openRun(name)
		if err != nil {
			r.close()
			return nil, err
		}
		r.runs = append(r.runs, run)
	}
	x.files = slices.Clone(m.Files)
	if err := x.loadRedirects(m.Redirects); err != nil {
		r.close()
		return nil, fmt.Errorf("manifest of version %d: %w", m.Version, err)
	}
	r.inRuns = make([]bool, len(x.files))
	for i := range r.inRuns {
		r.inRuns[i] = true
	}
	was := make(map[string]manifestFile, len(m.Live))
	for _, f := range m.Live {
		if int(f.ID) >= len(x.files) || x.files[f.ID] == "" {
			r.close()
			return nil, fmt.Errorf("manifest of version %d: live file id %d has no path", m.Version, f.ID)
		}
		was[x.files[f.ID]] = f
	}
	var fresh []*deltalog.Add
	files := st.snap.Files()
	for i := range files {
		add := &files[i]
		f, ok := was[add.Path]
		if !ok {
			fresh = append(fresh, add)
			continue
		}
		x.fileIDs[add.Path] = f.ID
		delete(was, add.Path)
		if dv := add.DeletionVector; f.DV != "" && (dv == nil || dv.UniqueID() != f.DV && dv.Cardinality <= f.Deleted) {
			r.close()
			return nil, fmt.Errorf("%w: deletion vector of %s lost rows since version %d", errCatchUpUnsupported, add.Path, m.Version)
		}
	}
	// A compaction since the manifest, tagged, is followed, not read: its
	// inputs are the manifest's files removed since.
	before := make(map[string]*deltalog.Add, len(m.Live))
	for _, f := range m.Live {
		before[x.files[f.ID]] = &deltalog.Add{Path: x.files[f.ID]}
	}
	follow := followMoves(ctx, deltalog.NewDVReader(store), before, filesByPath(st.snap), log)
	for path := range follow.from {
		x.fileIDs[path] = was[path].ID
	}
	x.move(follow.moves)
	fresh = slices.DeleteFunc(fresh, func(add *deltalog.Add) bool { return follow.to[add.Path] })
	for _, f := range was {
		x.files[f.ID] = "" // removed since
	}
	check := liveCheckOf(ctx, x, store, st.snap)
	if err := readFileKeys(ctx, store, st, fresh, func(path string, entries []keyEntry) error {
		return x.putNewer(path, follow.keep(path, entries), check)
	}); err != nil {
		r.close()
		return nil, err
	}
	return x, nil
}

// progressEvery is how often a long index build logs how far it is.
const progressEvery = 10 * time.Second

// buildProgress logs an index build's progress every progressEvery.
type buildProgress struct {
	log   *slog.Logger
	total int
	done  int
	start time.Time
	last  time.Time
}

func (p *buildProgress) file(keys int) {
	p.done++
	if now := time.Now(); now.Sub(p.last) >= progressEvery {
		p.last = now
		p.log.Info("building the key index", "files", p.done, "of", p.total, "keys", keys,
			"elapsed", now.Sub(p.start).Round(time.Second))
	}
}
