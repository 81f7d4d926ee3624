package deltalog

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
}

func newTableState() *tableState {
	return &tableState{
		txns:       map[string]Txn{},
		domains:    map[string]DomainMetadata{},
		files:      map[FileKey]*Add{},
		tombstones: map[FileKey]*Remove{},
	}
}

// apply folds one commit's (or checkpoint's) actions into the state, in log order.
func (s *tableState) apply(actions []Action) {
	s.ict = nil
	for i := range actions {
		a := &actions[i]
		switch {
		case a.Protocol != nil:
			s.protocol = a.Protocol
		case a.Metadata != nil:
			s.metadata = a.Metadata
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
		case a.Remove != nil:
			rm := *a.Remove
			rm.DataChange = false
			k := rm.Key()
			delete(s.files, k)
			s.tombstones[k] = &rm
		case a.CommitInfo != nil:
			s.ict = a.CommitInfo.InCommitTimestamp
		}
	}
}
