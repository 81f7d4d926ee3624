package merge

// DefaultOptions are the table policies a Sink opens with where Options
// leaves them zero (DeletionVectors nil reads as true); the configuration's
// table defaults are built from them.
func DefaultOptions() Options {
	dv := true
	return Options{DeleteMode: DeleteHard, TombstoneRetention: DefaultTombstoneRetention, Mode: ModeAuto,
		DeletionVectors: &dv, ColumnNames: ColumnNamesMapped}
}
