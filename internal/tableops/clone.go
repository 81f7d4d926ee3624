package tableops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// OpClone is the operation name of a clone's first commit, as Spark records it.
const OpClone = "CLONE"

// ErrTableExists means a clone's destination already holds a table.
var ErrTableExists = errors.New("tableops: the destination already holds a table")

// ErrAbsoluteSource means a deep clone's source names files by absolute URI: a deep
// clone copies files under the table root only.
var ErrAbsoluteSource = errors.New("tableops: a deep clone copies only files under the source's root")

// CloneOptions configure [Clone].
type CloneOptions struct {
	// Source names the source table in the commit (operationParameters.source).
	Source string
	// Now is the clone's createdTime. Zero: time.Now().
	Now time.Time
	// Shallow makes a SHALLOW CLONE: no file is copied, dst's adds name src's data files
	// and deletion vectors by absolute URI (SourceURI), as Spark's do.
	Shallow bool
	// BeforeCommit, when set, runs once the files are copied, before the commit that
	// makes dst a table: the caller's own state beside the table (the pipeline's
	// tombstones) is then in place before any writer can open dst.
	BeforeCommit func(ctx context.Context) error
}

// CloneMetrics are a CLONE's results, Spark's operationMetrics.
type CloneMetrics struct {
	Version         int64
	SourceTableSize int64
	SourceNumFiles  int
	NumCopiedFiles  int
	CopiedFilesSize int64
}

func (m CloneMetrics) operationMetrics() map[string]string {
	return map[string]string{
		"sourceTableSize":  strconv.FormatInt(m.SourceTableSize, 10),
		"sourceNumOfFiles": strconv.Itoa(m.SourceNumFiles),
		"numRemovedFiles":  "0",
		"numCopiedFiles":   strconv.Itoa(m.NumCopiedFiles),
		"removedFilesSize": "0",
		"copiedFilesSize":  strconv.FormatInt(m.CopiedFilesSize, 10),
	}
}

// Clone creates dst as a deep clone of snap, a version of src, as Spark's
// CREATE TABLE dst DEEP CLONE src VERSION AS OF n: every live data file and deletion
// vector file is copied under the same relative path, and dst's first commit holds
// snap's protocol, its metadata under a new table id, and an add per live file. With
// opts.Shallow it is Spark's SHALLOW CLONE: the adds name src's files by absolute URI
// and nothing is copied.
//
// Unlike Spark it also carries snap's txn versions, so that a pipeline pointed at dst
// resumes each Kafka partition from where snap had it: dst then stands in for src at
// snap's version, as RESTORE would leave src. A dst that holds a table gives
// ErrTableExists; files copied before a failure are left (no commit names them).
func Clone(ctx context.Context, src *deltalog.Table, snap *deltalog.Snapshot, dst *deltalog.Table, opts CloneOptions) (CloneMetrics, error) {
	if _, err := dst.Snapshot(ctx); err == nil {
		return CloneMetrics{}, ErrTableExists
	} else if !errors.Is(err, deltalog.ErrNotExist) {
		return CloneMetrics{}, fmt.Errorf("reading the destination: %w", err)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	m := CloneMetrics{SourceNumFiles: snap.NumFiles()}
	copied := map[string]bool{}
	var actions []deltalog.Action
	proto, meta := snap.Protocol(), snap.Metadata()
	meta.ID = uuid.NewString()
	created := now.UnixMilli()
	meta.CreatedTime = &created
	actions = append(actions, deltalog.Action{Protocol: &proto}, deltalog.Action{Metadata: &meta})
	var base string
	if opts.Shallow {
		u, err := SourceURI(src.Store())
		if err != nil {
			return CloneMetrics{}, err
		}
		base = u
	}
	for _, f := range snap.Files() {
		if opts.Shallow {
			add, err := shallowAdd(base, f)
			if err != nil {
				return CloneMetrics{}, err
			}
			m.SourceTableSize += f.Size
			actions = append(actions, deltalog.Action{Add: &add})
			continue
		}
		if deltalog.IsAbsolutePath(f.Path) {
			return CloneMetrics{}, fmt.Errorf("%w: data file %q is named by absolute URI (the source is a shallow clone): "+
				"deep-clone the table that holds the files", ErrAbsoluteSource, f.Path)
		}
		if dv := f.DeletionVector; dv != nil && dv.StorageType == deltalog.DVStoragePath {
			return CloneMetrics{}, fmt.Errorf("the deletion vector of %s is named by absolute path %q: a deep clone copies files under the table only", f.Path, dv.PathOrInlineDV)
		}
		m.SourceTableSize += f.Size
		for _, p := range referencedPaths(f.Key(), f.DeletionVector) {
			if copied[p] {
				continue // a deletion vector file several files share
			}
			n, err := copyObject(ctx, src.Store(), dst.Store(), p)
			if err != nil {
				return CloneMetrics{}, err
			}
			copied[p] = true
			m.CopiedFilesSize += n
		}
		add := f
		add.DataChange = true
		actions = append(actions, deltalog.Action{Add: &add})
		m.NumCopiedFiles++
	}
	txns := snap.Txns()
	for _, id := range slices.Sorted(maps.Keys(txns)) {
		txn := txns[id]
		actions = append(actions, deltalog.Action{Txn: &txn})
	}
	op := deltalog.Operation{Name: OpClone, Metrics: m.operationMetrics(), Parameters: map[string]string{
		"source": opts.Source, "sourceVersion": strconv.FormatInt(snap.Version(), 10), "isShallow": strconv.FormatBool(opts.Shallow),
	}}
	if opts.BeforeCommit != nil {
		if err := opts.BeforeCommit(ctx); err != nil {
			return CloneMetrics{}, err
		}
	}
	res, err := dst.Commit(ctx, nil, actions, op)
	if errors.Is(err, deltalog.ErrExist) {
		return CloneMetrics{}, ErrTableExists
	}
	if err != nil {
		return CloneMetrics{}, fmt.Errorf("committing CLONE: %w", err)
	}
	m.Version = res.Version
	return m, nil
}

// copyObject copies one object between stores and returns its size. It replaces an
// object a failed clone left at the destination.
func copyObject(ctx context.Context, from, to deltalog.Store, path string) (int64, error) {
	rc, err := from.Get(ctx, path)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := to.Put(ctx, path, data); err != nil {
		return 0, fmt.Errorf("copying %s: %w", path, err)
	}
	return int64(len(data)), nil
}
