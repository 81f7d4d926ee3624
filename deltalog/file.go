package deltalog

import "net/url"

// FileKey identifies a logical file, a data file plus its deletion vector: the
// protocol's (path, deletionVector.uniqueId) key, under which log replay reconciles adds
// and removes. The path is percent-decoded first, as Spark does, so "a%20b.parquet" and
// "a b.parquet" are one file. FileKeys compare with == and serve as map keys.
type FileKey struct {
	path string
	dv   string
}

func keyOf(path string, dv *DeletionVector) FileKey {
	// Spark decodes paths before keying; a path that does not decode is kept raw.
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	return FileKey{path: path, dv: dv.UniqueID()}
}

// Path is the data file's path, percent-decoded: its object path in the table's Store
// when the log holds a relative path.
func (k FileKey) Path() string { return k.path }

// Key returns the logical file a adds.
func (a *Add) Key() FileKey { return keyOf(a.Path, a.DeletionVector) }

// Key returns the logical file r removes; it equals the Key of that file's Add.
func (r *Remove) Key() FileKey { return keyOf(r.Path, r.DeletionVector) }

// Remove returns the remove action that tombstones a, as Spark's AddFile.remove builds
// it: extended file metadata (partition values, size, stats, tags) and the row-tracking
// fields copied from a, so that readers of the tombstone and conflict checks see the
// same file. dataChange is false for a rearrangement (OPTIMIZE) and true otherwise.
// DeletionTimestamp is left unset: [Table.Commit] stamps it with the commit time. The
// remove shares a's maps and deletion vector, which actions never modify.
func (a *Add) Remove(dataChange bool) *Remove {
	size := a.Size
	return &Remove{
		Path: a.Path, DataChange: dataChange, ExtendedFileMetadata: true, PartitionValues: a.PartitionValues,
		Size: &size, Stats: a.Stats, Tags: a.Tags, DeletionVector: a.DeletionVector,
		BaseRowID: a.BaseRowID, DefaultRowCommitVersion: a.DefaultRowCommitVersion,
	}
}
