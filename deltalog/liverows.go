package deltalog

// LiveRows returns how many of the file's rows are live: stats.numRecords
// counts every row written, and a deletion vector marks some of them
// deleted. ok is false when the file has no statistics.
func (a *Add) LiveRows() (n int64, ok bool, err error) {
	st, ok, err := ParseStatsSummary(a.Stats)
	if err != nil || !ok {
		return 0, ok, err
	}
	n = st.NumRecords
	if a.DeletionVector != nil {
		n -= a.DeletionVector.Cardinality
	}
	return n, true, nil
}
