package gcsstore

import (
	"fmt"
	"net/http"
	"sync"
)

// RetriesError reports an operation that failed with transient errors as many times as
// its retry budget allows. The SDK bounds the attempts of reads, lists and deletes
// itself, but retries an upload until its context ends, so the store counts failed
// attempts of every operation and refuses one more. It comes wrapped with
// deltalog.ErrUnavailable: waiting may cure it.
type RetriesError struct {
	Op       string // "get", "put", "list", "delete"
	Bucket   string
	Object   string
	Attempts int    // failed attempts
	Last     string // what the last one failed with
}

func (e *RetriesError) Error() string {
	return fmt.Sprintf("GCS %s gs://%s/%s failed %d times (the retry budget), last with %s",
		e.Op, e.Bucket, e.Object, e.Attempts, e.Last)
}

// budget counts one operation's failed attempts: errors and answers that the SDK
// retries (5xx, 408, 429).
type budget struct {
	max                int // failed attempts allowed
	op, bucket, object string
	mu                 sync.Mutex
	failed             int
	last               string
}

// exhausted returns a *RetriesError once max attempts have failed.
func (b *budget) exhausted() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failed < b.max {
		return nil
	}
	return &RetriesError{Op: b.op, Bucket: b.bucket, Object: b.object, Attempts: b.failed, Last: b.last}
}

func (b *budget) record(resp *http.Response, err error) {
	var last string
	switch {
	case err != nil:
		last = err.Error()
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		last = resp.Status
	default:
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failed++
	b.last = last
}
