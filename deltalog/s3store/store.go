package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/internal/backoff"
)

// ErrNoRegion reports that neither Options.Region nor the AWS configuration (AWS_REGION,
// AWS_DEFAULT_REGION, the profile's region) names a region, and no endpoint is set.
var ErrNoRegion = errors.New("s3store: no AWS region")

// Store is a deltalog.Store on one S3 bucket and key prefix. It is safe for concurrent use.
type Store struct {
	client     *s3.Client
	bucket     string
	root       string // key prefix of the table root: "" or ending in "/"
	maxRetries int
	timeout    time.Duration // of each operation's watchdog
	endpoint   string        // for errors
}

var _ deltalog.Store = (*Store)(nil)

// Root returns the table URL, "s3://bucket/prefix".
func (s *Store) Root() string {
	return "s3://" + s.bucket + "/" + strings.TrimSuffix(s.root, "/")
}

func (s *Store) key(p string) string { return s.root + p }

// Get opens an object. A missing object gives an error matching deltalog.ErrNotExist.
func (s *Store) Get(ctx context.Context, p string) (io.ReadCloser, error) {
	if err := deltalog.CheckPath(p); err != nil {
		return nil, fmt.Errorf("s3store: get: %w", err)
	}
	// The body is read under the same watchdog, stopped when it is closed.
	ctx, w := s.watch(ctx, "GetObject", s.key(p))
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(p))})
	if err != nil {
		w.Stop()
		if isStatus(err, http.StatusNotFound, "NoSuchKey") {
			return nil, fmt.Errorf("s3store: get %q: %w", p, deltalog.ErrNotExist)
		}
		return nil, fmt.Errorf("s3store: get %q: %w", p, classify(w.TimedOut(err)))
	}
	return w.Body(out.Body, nil), nil
}

// Put writes an object, replacing any previous one. S3 makes a PUT visible only once
// complete.
func (s *Store) Put(ctx context.Context, p string, data []byte) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("s3store: put: %w", err)
	}
	if err := s.putObject(ctx, s.putInput(p, data)); err != nil {
		return fmt.Errorf("s3store: put %q: %w", p, classify(err))
	}
	return nil
}

func (s *Store) putInput(p string, data []byte) *s3.PutObjectInput {
	return &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           aws.String(s.key(p)),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
}

// PutIfAbsent writes an object unless one exists at p, in which case it returns an error
// matching deltalog.ErrExist.
//
// A 412 is ambiguous when the SDK retried the PUT after a timeout or 5xx: the first
// attempt may have succeeded, and then it is our own object that is "already there".
// So on 412 the store reads the object back; if it holds exactly our bytes, the put
// succeeded. Commits carry a unique commitInfo, so equal bytes mean this writer wrote it.
func (s *Store) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("s3store: put-if-absent: %w", err)
	}
	for attempt := 0; ; attempt++ {
		in := s.putInput(p, data)
		in.IfNoneMatch = aws.String("*")
		err := s.putObject(ctx, in)
		switch {
		case err == nil:
			return nil
		case isStatus(err, http.StatusPreconditionFailed, "PreconditionFailed"),
			// Some S3-compatible servers answer 304 Not Modified (object_store maps it too).
			isStatus(err, http.StatusNotModified, "NotModified"):
			ours, err := deltalog.Holds(ctx, s, p, data)
			if err != nil {
				// Unknown whether the object is ours: neither success nor ErrExist is safe,
				// since a committer would retry at the next version after ErrExist.
				return fmt.Errorf("s3store: put-if-absent %q: key taken, reading it back failed: %w", p, classify(err))
			}
			if ours {
				return nil
			}
			return fmt.Errorf("s3store: put-if-absent %q: %w", p, deltalog.ErrExist)
		case isStatus(err, http.StatusConflict, "ConditionalRequestConflict") && attempt < s.maxRetries:
			if err := conflictBackoff.Wait(ctx, attempt); err != nil {
				return fmt.Errorf("s3store: put-if-absent %q: %w", p, err)
			}
		default:
			return fmt.Errorf("s3store: put-if-absent %q: %w", p, classify(err))
		}
	}
}

// putObject runs one PutObject under a watchdog. Its error is the SDK's,
// for isStatus, or a timeout already classified.
func (s *Store) putObject(ctx context.Context, in *s3.PutObjectInput) error {
	ctx, w := s.watch(ctx, "PutObject", *in.Key)
	_, err := s.client.PutObject(ctx, in)
	w.Stop()
	return w.TimedOut(err)
}

// conflictBackoff spaces the retries of a conditional write that raced
// another: short, so that racing writers spread out.
var conflictBackoff = backoff.Policy{Min: 50 * time.Millisecond, Max: 2 * time.Second}

// Delete removes an object; a missing object is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("s3store: delete: %w", err)
	}
	ctx, w := s.watch(ctx, "DeleteObject", s.key(p))
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(p))})
	w.Stop()
	err = w.TimedOut(err)
	if err != nil && !isStatus(err, http.StatusNotFound, "NoSuchKey") {
		return fmt.Errorf("s3store: delete %q: %w", p, classify(err))
	}
	return nil
}

// List yields the objects under prefix that sort after startAfter, in key order, one
// ListObjectsV2 page at a time.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	return func(yield func(deltalog.ObjectInfo, error) bool) {
		in := &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.key(prefix))}
		if startAfter != "" {
			in.StartAfter = aws.String(s.key(startAfter))
		}
		pages := s3.NewListObjectsV2Paginator(s.client, in)
		for pages.HasMorePages() {
			wctx, w := s.watch(ctx, "ListObjectsV2", s.key(prefix))
			page, err := pages.NextPage(wctx)
			w.Stop()
			if err != nil {
				yield(deltalog.ObjectInfo{}, fmt.Errorf("s3store: listing %q: %w", prefix, classify(w.TimedOut(err))))
				return
			}
			for _, o := range page.Contents {
				k := aws.ToString(o.Key)
				p, ok := strings.CutPrefix(k, s.root)
				if !ok {
					continue // cannot happen: every key starts with the listed prefix
				}
				info := deltalog.ObjectInfo{Path: p, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)}
				if !yield(info, nil) {
					return
				}
			}
		}
	}
}

// isStatus reports whether err is an S3 error with the given HTTP status or error code.
func isStatus(err error, status int, code string) bool {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == status {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}
