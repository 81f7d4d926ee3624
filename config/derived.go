package config

import "cmp"

// followSetFields moves the defaults that are paired with a field the file
// sets (set holds the paths it gives a value), so that no default contradicts
// a valid setting: of two settings Validate keeps in order, the one the file
// leaves unset is its default moved only as far as the one it sets requires.
// batch: {max_records: 50} reads as min_records 50, not 100; batch:
// {min_records: 50000} as max_records 50000. Two settings the file both sets
// stay as written, and Validate names both when they are out of order.
func (c *Config) followSetFields(set map[string]bool) {
	b, m := &c.Batch, &c.Maintenance
	follow(set, "batch.min_records", &b.MinRecords, "batch.max_records", &b.MaxRecords, 1, MaxBatchRecords)
	follow(set, "batch.max_age", &b.MaxAge, "batch.max_delay", &b.MaxDelay, 1, MaxBatchAge)
	follow(set, "batch.max_bytes", &b.MaxBytes, "memory.max_buffered_bytes", &c.Memory.MaxBufferedBytes, 1, MaxBatchBytes)
	follow(set, "maintenance.checkpoint_commits", &m.CheckpointCommits,
		"maintenance.checkpoint_max_commits", &m.CheckpointMaxCommits, 1, MaxCheckpointCommits)
}

// follow keeps low ≤ high when set holds just one of their paths: the other
// moves from its default only as far as the set one, provided that lies in
// [least, most], where both are valid. Out of it, the default stays and
// Validate reports the set value alone.
func follow[T cmp.Ordered](set map[string]bool, lowPath string, low *T, highPath string, high *T, least, most T) {
	switch {
	case set[lowPath] == set[highPath]: // both as written, or both defaults (in order)
	case set[lowPath]:
		if least <= *low && *low <= most {
			*high = max(*high, *low)
		}
	case least <= *high && *high <= most:
		*low = min(*low, *high)
	}
}
