package tableops

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrSameVersion means a RESTORE to the version the table is already at.
	ErrSameVersion = errors.New("tableops: the table is already at the target version")
	// ErrFileGone means a RESTORE target needs a file that no longer exists, usually
	// because VACUUM deleted it; restoring without it would not give the target version.
	ErrFileGone = errors.New("tableops: file no longer exists")
)

// RetentionError refuses a VACUUM retention shorter than the table's
// delta.deletedFileRetentionDuration: readers of older versions and concurrent writers
// could lose files. [VacuumOptions.SkipRetentionCheck] allows it.
type RetentionError struct {
	Retention, TableRetention time.Duration
}

func (e *RetentionError) Error() string {
	return fmt.Sprintf("tableops: retention %s is shorter than the table's delta.deletedFileRetentionDuration (%s)",
		e.Retention, e.TableRetention)
}
