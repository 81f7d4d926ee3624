package merge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/datafile"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// VerifyOptions configure VerifyTable.
type VerifyOptions struct {
	// MaxProblems is how many problems the report lists; more are only
	// counted. Default 20.
	MaxProblems int
	// MemoryBytes bounds the keys held in memory to find duplicates; more
	// are sorted into spill files in TempDir. Default 64 MiB.
	MemoryBytes int64
	// TempDir holds the spill files; default os.TempDir().
	TempDir string
	// IndexDir, when set, is a pipeline's on-disk key index directory
	// (sink.index_dir) whose newest manifest is checked against the files.
	IndexDir string
}

// ProblemKind names what a Problem found.
type ProblemKind string

const (
	ProblemDuplicateKey   ProblemKind = "duplicate key"
	ProblemDeletionVector ProblemKind = "deletion vector"
	ProblemMissingFile    ProblemKind = "missing file"
	ProblemStats          ProblemKind = "statistics"
	ProblemTombstone      ProblemKind = "tombstone"
	ProblemKeyIndex       ProblemKind = "key index"
)

// Problem is one disagreement VerifyTable found, with where it is.
type Problem struct {
	Kind ProblemKind
	File string
	Row  int64  // physical row index in File, -1 when not about one row
	Key  string // the key's values, "" when not about one key
	Msg  string
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(string(p.Kind))
	if p.File != "" {
		fmt.Fprintf(&b, ": file %s", p.File)
	}
	if p.Row >= 0 {
		fmt.Fprintf(&b, " row %d", p.Row)
	}
	if p.Key != "" {
		fmt.Fprintf(&b, " key (%s)", p.Key)
	}
	return b.String() + ": " + p.Msg
}

// VerifyReport is what VerifyTable checked and found.
type VerifyReport struct {
	Version         int64
	Files           int
	LiveRows        int64
	DeletionVectors int
	TombstoneKeys   int
	IndexChecked    bool
	// IndexUnsaved: IndexDir holds no index saved at or below Version, so
	// there was none to check (a pipeline builds it from the files when it
	// opens the table).
	IndexUnsaved bool
	// KeySpills is how many sorted spill files the keys took.
	KeySpills int
	Problems  []Problem // the first MaxProblems
	Total     int       // problems found, listed or not
}

// OK reports whether no problem was found.
func (r *VerifyReport) OK() bool { return r.Total == 0 }

// Summary is the report in one line.
func (r *VerifyReport) Summary() string {
	idx := ""
	switch {
	case r.IndexChecked:
		idx = ", key index"
	case r.IndexUnsaved:
		idx = ", no key index saved yet"
	}
	return fmt.Sprintf("version %d: %d files, %d live rows, %d deletion vectors, %d tombstoned keys%s: %d problems",
		r.Version, r.Files, r.LiveRows, r.DeletionVectors, r.TombstoneKeys, idx, r.Total)
}

func (r *VerifyReport) add(max int, p Problem) {
	r.Total++
	if len(r.Problems) < max {
		r.Problems = append(r.Problems, p)
	}
}

// VerifyTable checks the latest version of the cdc2delta table in store
// against its own contract: no key has two live rows; every deletion
// vector is readable, counts what the log says and stays within its file's
// rows; every live file exists; each file's statistics are those of its
// rows; no live row is at or below a counted tombstone of its key, or
// below the truncate floor; and, with IndexDir, the key index points each
// live key at its row and holds no other. Memory is one file's rows plus
// MemoryBytes of keys, the tombstones and, with IndexDir, the index.
func VerifyTable(ctx context.Context, store deltalog.Store, opts VerifyOptions) (*VerifyReport, error) {
	if opts.MaxProblems <= 0 {
		opts.MaxProblems = 20
	}
	if opts.MemoryBytes <= 0 {
		opts.MemoryBytes = 64 << 20
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	table, err := deltalog.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	snap, err := table.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	st, err := newTableState(snap.Metadata())
	if err != nil {
		return nil, err
	}
	st.snap = snap
	tombs := newTombstones()
	// Every counted entry, however old: an expired one still says the key
	// was deleted at its position.
	if err := tombs.catchUp(ctx, store, tombstoneView{table: table, version: snap.Version()}, 0, nil); err != nil {
		return nil, err
	}
	v := &verifier{store: store, st: st, tombs: tombs, opts: opts, dvs: deltalog.NewDVReader(store),
		rep: &VerifyReport{Version: snap.Version(), TombstoneKeys: len(tombs.keys)}}
	v.keys, err = newKeySorter(opts.TempDir, opts.MemoryBytes)
	if err != nil {
		return nil, err
	}
	defer v.keys.close()
	files := snap.Files()
	v.rep.Files = len(files)
	for i := range files {
		if err := v.file(ctx, uint32(i), &files[i]); err != nil {
			return nil, err
		}
	}
	var idx *indexCheck
	if opts.IndexDir != "" {
		switch idx, err = openIndexCheck(ctx, store, st, opts.IndexDir); {
		case errors.Is(err, errNoManifest):
			v.rep.IndexUnsaved = true
		case err != nil:
			return nil, err
		default:
			defer idx.close()
			v.rep.IndexChecked = true
		}
	}
	v.rep.KeySpills = len(v.keys.spills)
	if err := v.sortedKeys(ctx, files, idx); err != nil {
		return nil, err
	}
	return v.rep, nil
}

// verifier is one VerifyTable run.
type verifier struct {
	store deltalog.Store
	st    *tableState
	tombs *tombstones
	opts  VerifyOptions
	dvs   *deltalog.DVReader
	keys  *keySorter
	rep   *VerifyReport
}

func (v *verifier) problem(p Problem) { v.rep.add(v.opts.MaxProblems, p) }

// file checks one live file and feeds its live keys to the sorter.
func (v *verifier) file(ctx context.Context, id uint32, add *deltalog.Add) error {
	rows, err := datafile.Read(ctx, v.store, add, v.st.Schema, datafile.ReadOptions{
		Properties: v.st.meta.Configuration, PartitionColumns: v.st.meta.PartitionColumns, DeletedRows: roaring64.New(),
	})
	if errors.Is(err, deltalog.ErrNotExist) {
		msg := "the log adds it but it is not in storage"
		if add.DeletionVector != nil {
			msg = "the log gives it a deletion vector but the file is not in storage (removed or vacuumed)"
		}
		v.problem(Problem{Kind: ProblemMissingFile, File: add.Path, Row: -1, Msg: msg})
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", add.Path, err)
	}
	dv := roaring64.New()
	if add.DeletionVector != nil {
		v.rep.DeletionVectors++
		if dv, err = v.deletionVector(ctx, add, int64(len(rows))); err != nil {
			return err
		}
	}
	if err := v.stats(ctx, add, rows); err != nil {
		return err
	}
	var buf []byte
	for r, row := range rows {
		if dv.Contains(uint64(r)) {
			continue
		}
		v.rep.LiveRows++
		if buf, err = v.st.AppendRowKey(buf[:0], row); err != nil {
			return fmt.Errorf("%s row %d: %w", add.Path, r, err)
		}
		show := v.showKey(row)
		v.liveRow(add.Path, int64(r), string(buf), show, row[v.st.PosField])
		if err := v.keys.add(ctx, sortedKey{key: string(buf), show: show, file: id, row: int64(r)}); err != nil {
			return err
		}
	}
	return nil
}

// deletionVector reads add's deletion vector and checks it against the
// log's cardinality and the file's rows; an unreadable one is a problem,
// and the file's rows then all count as live.
func (v *verifier) deletionVector(ctx context.Context, add *deltalog.Add, rows int64) (*roaring64.Bitmap, error) {
	dv, err := v.dvs.Read(ctx, add.DeletionVector)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		v.problem(Problem{Kind: ProblemDeletionVector, File: add.Path, Row: -1, Msg: fmt.Sprintf("cannot be read: %v", err)})
		return roaring64.New(), nil
	}
	if n := int64(dv.GetCardinality()); n != add.DeletionVector.Cardinality {
		v.problem(Problem{Kind: ProblemDeletionVector, File: add.Path, Row: -1,
			Msg: fmt.Sprintf("holds %d rows, the log says %d", n, add.DeletionVector.Cardinality)})
	}
	if !dv.IsEmpty() && int64(dv.Maximum()) >= rows {
		v.problem(Problem{Kind: ProblemDeletionVector, File: add.Path, Row: int64(dv.Maximum()),
			Msg: fmt.Sprintf("deletes row %d of a file of %d rows", dv.Maximum(), rows)})
	}
	return dv, nil
}

// liveRow checks a live row against the tombstones of its key and the
// truncate floor: a row at or below its delete, or below the floor, should
// have been deleted.
func (v *verifier) liveRow(file string, row int64, key, show string, posVal any) {
	hex, _ := posVal.(string)
	pos, err := codecs.PositionFromHex(hex)
	if err != nil {
		v.problem(Problem{Kind: ProblemTombstone, File: file, Row: row, Key: show,
			Msg: fmt.Sprintf("bad %s %q: %v", cdctable.ColPosition, hex, err)})
		return
	}
	if ts, ok := v.tombs.keys[key]; ok && pos.Compare(ts.pos) <= 0 {
		v.problem(Problem{Kind: ProblemTombstone, File: file, Row: row, Key: show,
			Msg: fmt.Sprintf("live at position %s, at or below its delete at %s", pos, ts.pos)})
	}
	// A row at the floor itself is a load's (ADR 0040); a truncate's own
	// position writes no row.
	if pos.Compare(v.tombs.floor) < 0 {
		v.problem(Problem{Kind: ProblemTombstone, File: file, Row: row, Key: show,
			Msg: fmt.Sprintf("live at position %s, below the truncate at %s", pos, v.tombs.floor)})
	}
}

// showKey renders a row's key as name=value pairs.
func (v *verifier) showKey(row []any) string {
	parts := make([]string, len(v.st.KeyFields))
	for i, f := range v.st.KeyFields {
		parts[i] = fmt.Sprintf("%s=%v", v.st.KeyNames[i], row[f])
	}
	return strings.Join(parts, ", ")
}

// sortedKeys walks the live keys in key order: equal neighbours are
// duplicates, and with idx each key must be in the index at its row.
func (v *verifier) sortedKeys(ctx context.Context, files []deltalog.Add, idx *indexCheck) error {
	var prev sortedKey
	have := false
	var unique int64
	err := v.keys.each(ctx, func(k sortedKey) error {
		if have && k.key == prev.key {
			v.problem(Problem{Kind: ProblemDuplicateKey, File: files[k.file].Path, Row: k.row, Key: k.show,
				Msg: fmt.Sprintf("also live in file %s row %d", files[prev.file].Path, prev.row)})
			return nil
		}
		prev, have = k, true
		unique++
		if idx != nil {
			return idx.want(k.key, k.show, files[k.file].Path, k.row, v.problem)
		}
		return nil
	})
	if err != nil || idx == nil {
		return err
	}
	return idx.finish(unique, v.problem)
}
