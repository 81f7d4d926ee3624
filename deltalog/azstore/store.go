package azstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Store is a deltalog.Store on one container and blob name prefix. It is
// safe for concurrent use.
type Store struct {
	client    *container.Client
	container string
	root      string // blob name prefix of the table root: "" or ending in "/"
	rootURL   string
	timeout   time.Duration // of each operation's watchdog
	endpoint  string        // for errors
}

var _ deltalog.Store = (*Store)(nil)

// Root returns the table URL: abfss://container@account.dfs.../prefix on
// Azure, az://container/prefix on an emulator.
func (s *Store) Root() string { return s.rootURL }

func (s *Store) name(p string) string { return s.root + p }

// Get opens a blob. A missing blob gives an error matching deltalog.ErrNotExist.
func (s *Store) Get(ctx context.Context, p string) (io.ReadCloser, error) {
	if err := deltalog.CheckPath(p); err != nil {
		return nil, fmt.Errorf("azstore: get: %w", err)
	}
	// The body is read under the same watchdog, stopped when it is closed.
	ctx, w := s.watch(ctx, "GetBlob", s.name(p))
	out, err := s.client.NewBlobClient(s.name(p)).DownloadStream(ctx, nil)
	if err != nil {
		w.Stop()
		if isStatus(err, http.StatusNotFound, "BlobNotFound") {
			return nil, fmt.Errorf("azstore: get %q: %w", p, deltalog.ErrNotExist)
		}
		return nil, fmt.Errorf("azstore: get %q: %w", p, classify(w.TimedOut(err)))
	}
	return w.Body(out.Body, nil), nil
}

// Put writes a blob, replacing any previous one. A Put Blob is visible only
// once complete.
func (s *Store) Put(ctx context.Context, p string, data []byte) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("azstore: put: %w", err)
	}
	if err := s.upload(ctx, p, data, nil); err != nil {
		return fmt.Errorf("azstore: put %q: %w", p, classify(err))
	}
	return nil
}

// ifAbsent is the condition of a put-if-absent: no blob of any ETag exists.
var ifAbsent = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: new(azcore.ETagAny)}}

// PutIfAbsent writes a blob unless one exists at p, in which case it returns
// an error matching deltalog.ErrExist.
//
// A 409 or 412 is ambiguous when the SDK retried the upload after a timeout
// or 5xx: the first attempt may have succeeded, and then it is our own blob
// that is "already there". So the store reads the blob back; if it holds
// exactly our bytes, the put succeeded. Commits carry a unique commitInfo,
// so equal bytes mean this writer wrote it.
func (s *Store) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("azstore: put-if-absent: %w", err)
	}
	err := s.upload(ctx, p, data, ifAbsent)
	switch {
	case err == nil:
		return nil
	case isStatus(err, http.StatusConflict, "BlobAlreadyExists"), isStatus(err, http.StatusPreconditionFailed, ""):
		ours, err := deltalog.Holds(ctx, s, p, data)
		if err != nil {
			// Unknown whether the blob is ours: neither success nor ErrExist is
			// safe, since a committer would retry at the next version after ErrExist.
			return fmt.Errorf("azstore: put-if-absent %q: name taken, reading it back failed: %w", p, classify(err))
		}
		if ours {
			return nil
		}
		return fmt.Errorf("azstore: put-if-absent %q: %w", p, deltalog.ErrExist)
	default:
		return fmt.Errorf("azstore: put-if-absent %q: %w", p, classify(err))
	}
}

// upload runs one Put Blob under a watchdog. Its error is the SDK's, for
// isStatus, or a timeout already classified.
func (s *Store) upload(ctx context.Context, p string, data []byte, cond *blob.AccessConditions) error {
	ctx, w := s.watch(ctx, "PutBlob", s.name(p))
	_, err := s.client.NewBlockBlobClient(s.name(p)).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)),
		&blockblob.UploadOptions{AccessConditions: cond})
	w.Stop()
	return w.TimedOut(err)
}

// deleteSnapshots deletes a blob's snapshots with it: Azure refuses to
// delete a blob that has some otherwise.
var deleteSnapshots = &blob.DeleteOptions{DeleteSnapshots: new(blob.DeleteSnapshotsOptionTypeInclude)}

// Delete removes a blob; a missing blob is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := deltalog.CheckPath(p); err != nil {
		return fmt.Errorf("azstore: delete: %w", err)
	}
	ctx, w := s.watch(ctx, "DeleteBlob", s.name(p))
	_, err := s.client.NewBlobClient(s.name(p)).Delete(ctx, deleteSnapshots)
	w.Stop()
	err = w.TimedOut(err)
	if err != nil && !isStatus(err, http.StatusNotFound, "BlobNotFound") {
		return fmt.Errorf("azstore: delete %q: %w", p, classify(err))
	}
	return nil
}

// List yields the blobs under prefix that sort after startAfter, in name
// order, one List Blobs page at a time. The Blob API has no start-after, so
// the blobs up to startAfter are listed and skipped here, as object_store
// does on Azure. Directories of a hierarchical namespace (ADLS Gen2) are
// not objects and are skipped too.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[deltalog.ObjectInfo, error] {
	return func(yield func(deltalog.ObjectInfo, error) bool) {
		pages := s.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: new(s.name(prefix))})
		for pages.More() {
			wctx, w := s.watch(ctx, "ListBlobs", s.name(prefix))
			page, err := pages.NextPage(wctx)
			w.Stop()
			if err != nil {
				yield(deltalog.ObjectInfo{}, fmt.Errorf("azstore: listing %q: %w", prefix, classify(w.TimedOut(err))))
				return
			}
			for _, b := range page.Segment.BlobItems {
				if b.Name == nil || b.Properties == nil {
					continue
				}
				p, ok := strings.CutPrefix(*b.Name, s.root)
				if !ok || p <= startAfter || deref(b.Properties.ResourceType) == "directory" {
					continue
				}
				info := deltalog.ObjectInfo{Path: p, Size: deref(b.Properties.ContentLength), ModTime: deref(b.Properties.LastModified)}
				if !yield(info, nil) {
					return
				}
			}
		}
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
