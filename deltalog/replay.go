package deltalog

import (
	"cmp"
	"fmt"
)

// tableState is the reconciled state while replaying the log.
type tableState struct {
	protocol   *Protocol
	metadata   *Metadata
	txns       map[string]Txn
	domains    map[string]DomainMetadata
	files      map[FileKey]*Add
	tombstones map[FileKey]*Remove
	// ict is the inCommitTimestamp of the last applied commit, if it had one.
	ict *int64
	// metadataFrom is the log file the metadata came from ("" when it came from a
	// snapshot), for errors about it.
	metadataFrom string
	// absolute maps the live files with an absolute path to the log file that added
	// them; finishSnapshot refuses them. Nil until one is seen: they are rare.
	absolute map[FileKey]string
}

func newTableState() *tableState {
	return &tableState{
		txns:       map[string]Txn{},
		domains:    map[string]DomainMetadata{},
		files:      map[FileKey]*Add{},
		tombstones: map[FileKey]*Remove{},
	}
}

// apply folds one commit's (or checkpoint's) actions into the state, in log order; from
// is the log file they were read from.
func (s *tableState) apply(actions []Action, from string) {
	s.ict = nil
	for i := range actions {
		a := &actions[i]
		switch {
		case a.Protocol != nil:
			s.protocol = a.Protocol
		case a.Metadata != nil:
			s.metadata, s.metadataFrom = a.Metadata, from
		case a.Txn != nil:
			s.txns[a.Txn.AppID] = *a.Txn
		case a.DomainMetadata != nil:
			if a.DomainMetadata.Removed {
				delete(s.domains, a.DomainMetadata.Domain)
			} else {
				s.domains[a.DomainMetadata.Domain] = *a.DomainMetadata
			}
		case a.Add != nil:
			// State holds no data changes, only files: like Spark, store dataChange=false,
			// so state from a checkpoint and from commits is identical.
			add := *a.Add
			add.DataChange = false
			k := add.Key()
			s.files[k] = &add
			delete(s.tombstones, k)
			if IsAbsolutePath(add.Path) {
				if s.absolute == nil {
					s.absolute = map[FileKey]string{}
				}
				s.absolute[k] = from
			}
		case a.Remove != nil:
			rm := *a.Remove
			rm.DataChange = false
			// A tombstone is kept for the retention period (a week by default), one
			// per file a commit removes, for VACUUM and checkpoints, neither of which
			// reads its statistics or tags: a table that commits every few seconds
			// holds tens of thousands, and those strings were most of their memory.
			rm.Stats, rm.Tags = "", nil
			k := rm.Key()
			delete(s.files, k)
			delete(s.absolute, k)
			s.tombstones[k] = &rm
		case a.CommitInfo != nil:
			s.ict = a.CommitInfo.InCommitTimestamp
		}
	}
}

// schema parses the table schema of the replayed state at version v; where names the
// log file to blame when the metadata's own file is not known.
func (s *tableState) schema(v int64, where string) (*StructType, error) {
	from := cmp.Or(s.metadataFrom, where)
	if s.metadata.SchemaString == "" {
		return nil, &CorruptFileError{Path: from, Err: fmt.Errorf(
			"metaData of version %d has no schemaString, so the table has no schema (the writer that committed it left it out)", v)}
	}
	schema, err := ParseSchema(s.metadata.SchemaString)
	if err != nil {
		return nil, &CorruptFileError{Path: from, Err: fmt.Errorf("metaData.schemaString of version %d: %w", v, err)}
	}
	return schema, nil
}

// checkRelativePaths refuses live files with an absolute path (files sorted, so the
// error names the same one every time).
//
// Delta allows absolute add paths (SHALLOW CLONE writes them, pointing into the source
// table). Reading those under the table's own root would be possible, as dvPathInStore
// does for deletion vectors, but every place that turns add.path into a store key would
// have to agree: replay's file keys (a remove may name the same file relatively),
// VACUUM's set of files to keep, RESTORE's existence check, OPTIMIZE and MERGE
// rewrites. One that did not would, in VACUUM, delete a live file. Refusing the table
// when it is loaded keeps every command and the processor from acting on it. A table
// opened with ResolveAbsolutePaths loads them to be read (files outside the root come
// from the store of their URI), and Commit refuses it all the same.
func (s *tableState) checkRelativePaths(v int64, files []Add) error {
	if abs := s.absolutePaths(v, files); len(abs) > 0 {
		return abs[0]
	}
	return nil
}

// absolutePaths lists the live files with an absolute path, in files order.
func (s *tableState) absolutePaths(v int64, files []Add) []*AbsolutePathError {
	if len(s.absolute) == 0 {
		return nil
	}
	var out []*AbsolutePathError
	for _, f := range files {
		if from, ok := s.absolute[f.Key()]; ok {
			out = append(out, &AbsolutePathError{Version: v, Path: f.Path, File: from})
		}
	}
	return out
}
