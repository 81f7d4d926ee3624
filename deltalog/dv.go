package deltalog

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Deletion vector storage types (DeletionVector.StorageType).
const (
	// DVStorageUUID: a file in the table, named from a UUID with an optional prefix dir.
	DVStorageUUID = "u"
	// DVStorageInline: the bitmap itself, Z85-encoded, in the descriptor.
	DVStorageInline = "i"
	// DVStoragePath: a file at an absolute URI.
	DVStoragePath = "p"
)

// ErrBadDeletionVector reports a deletion vector descriptor that cannot be resolved: an
// unknown storage type, a malformed file id or inline bitmap, or an absolute path
// outside the table.
var ErrBadDeletionVector = errors.New("deltalog: invalid deletion vector descriptor")

// dvUUIDLen is the length of a Z85-encoded UUID (16 bytes → 20 characters).
const dvUUIDLen = 20

// UniqueID identifies the deletion vector within the table: the storage type, the path
// or inline data, and "@offset" when an offset is present, as the protocol defines it.
// Together with Add.Path it keys a logical file during log replay.
func (d *DeletionVector) UniqueID() string {
	if d == nil {
		return ""
	}
	id := d.StorageType + d.PathOrInlineDV
	if d.Offset != nil {
		id += "@" + strconv.FormatInt(int64(*d.Offset), 10)
	}
	return id
}

// RelativePath returns the path, relative to the table root, of the file holding a "u"
// deletion vector: "<prefix>/deletion_vector_<uuid>.bin", where the prefix is whatever
// precedes the 20-character Z85 id. Other storage types give ErrBadDeletionVector.
func (d *DeletionVector) RelativePath() (string, error) {
	if d.StorageType != DVStorageUUID {
		return "", fmt.Errorf("%w: storage type %q has no table-relative file", ErrBadDeletionVector, d.StorageType)
	}
	s := d.PathOrInlineDV
	if len(s) < dvUUIDLen {
		return "", fmt.Errorf("%w: %q is shorter than a Z85 UUID", ErrBadDeletionVector, s)
	}
	prefix, encoded := s[:len(s)-dvUUIDLen], s[len(s)-dvUUIDLen:]
	raw, err := z85Decode(encoded)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrBadDeletionVector, s, err)
	}
	id, err := uuid.FromBytes(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrBadDeletionVector, s, err)
	}
	name := dvFileName(id)
	if prefix == "" {
		return name, nil
	}
	if err := CheckPath(prefix); err != nil {
		return "", fmt.Errorf("%w: prefix of %q: %w", ErrBadDeletionVector, s, err)
	}
	return prefix + "/" + name, nil
}

// AbsolutePath returns the location of the file holding a "u" or "p" deletion vector:
// tableRoot joined with RelativePath for "u", the stored URI for "p".
func (d *DeletionVector) AbsolutePath(tableRoot string) (string, error) {
	switch d.StorageType {
	case DVStoragePath:
		if d.PathOrInlineDV == "" {
			return "", fmt.Errorf("%w: empty path", ErrBadDeletionVector)
		}
		return d.PathOrInlineDV, nil
	case DVStorageUUID:
		rel, err := d.RelativePath()
		if err != nil {
			return "", err
		}
		return strings.TrimSuffix(tableRoot, "/") + "/" + rel, nil
	default:
		return "", fmt.Errorf("%w: storage type %q has no file", ErrBadDeletionVector, d.StorageType)
	}
}

func dvFileName(id uuid.UUID) string {
	return "deletion_vector_" + id.String() + ".bin"
}

// dvPathInStore resolves the file of a "u" or "p" deletion vector to a path in s. An
// absolute "p" path is read under s's root (Root) when it lies beneath it, else only
// when s resolves absolute URIs (ResolveAbsolutePaths); Spark writes "p" for tables
// cloned from elsewhere.
func dvPathInStore(s Store, d *DeletionVector) (string, error) {
	if d.StorageType != DVStoragePath {
		return d.RelativePath()
	}
	r, ok := s.(interface{ Root() string })
	if !ok || r.Root() == "" {
		if ResolvesAbsolutePaths(s) && IsAbsolutePath(d.PathOrInlineDV) {
			return d.PathOrInlineDV, nil
		}
		return "", fmt.Errorf("%w: absolute path %q and the store has no root to resolve it against", ErrBadDeletionVector, d.PathOrInlineDV)
	}
	p := d.PathOrInlineDV
	root := strings.TrimSuffix(r.Root(), "/") + "/"
	if strings.HasPrefix(p, "file:") && !strings.HasPrefix(root, "file:") {
		p = strings.TrimPrefix(strings.TrimPrefix(p, "file:"), "//")
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
	}
	rel, ok := strings.CutPrefix(p, root)
	if !ok && ResolvesAbsolutePaths(s) && IsAbsolutePath(d.PathOrInlineDV) {
		// Outside the table (a shallow clone's source): the store reads the URI itself.
		return d.PathOrInlineDV, nil
	}
	if !ok {
		return "", fmt.Errorf("%w: absolute path %q is outside the table at %q", ErrBadDeletionVector, d.PathOrInlineDV, root)
	}
	// The stored path is a URI (Hadoop Path.toUri), so its special characters are escaped.
	rel, err := url.PathUnescape(rel)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrBadDeletionVector, d.PathOrInlineDV, err)
	}
	if err := CheckPath(rel); err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadDeletionVector, err)
	}
	return rel, nil
}
