package tableops

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// SourceURI is the URI a shallow clone names the files of the table in s by: the
// escaped absolute path of a local table, the table URL of a bucket or container. Paths
// in the log are URIs (PROTOCOL.md), so a root with a space or a "%" is escaped here
// and a relative add.path, already escaped, is appended as it is. A local path goes
// without "file:" (Spark writes "file:/..."): Spark and delta-rs read both, DuckDB's
// delta_scan only the bare path (it prefixes the table's root to anything else).
func SourceURI(s deltalog.Store) (string, error) {
	r, ok := s.(interface{ Root() string })
	if !ok || r.Root() == "" {
		return "", fmt.Errorf("the source store has no root URL to name its files by: a shallow clone needs one")
	}
	root := strings.TrimSuffix(r.Root(), "/")
	if strings.HasPrefix(root, "/") {
		return (&url.URL{Path: root}).EscapedPath(), nil
	}
	scheme, rest, ok := strings.Cut(root, "://")
	if !ok {
		return "", fmt.Errorf("the source root %q is not a URL", root)
	}
	authority, path, _ := strings.Cut(rest, "/")
	u := &url.URL{Scheme: scheme, Host: authority}
	if user, host, ok := strings.Cut(authority, "@"); ok {
		u.User, u.Host = url.User(user), host
	}
	if path != "" {
		u.Path = "/" + path
	}
	return u.String(), nil
}

// shallowAdd is f as a shallow clone adds it: its path and a "u" deletion vector's file
// named by absolute URI under base (SourceURI), as Spark's SHALLOW CLONE writes them.
func shallowAdd(base string, f deltalog.Add) (deltalog.Add, error) {
	add := f
	add.DataChange = true
	if !deltalog.IsAbsolutePath(f.Path) {
		add.Path = base + "/" + f.Path
	}
	if dv := f.DeletionVector; dv != nil && dv.StorageType == deltalog.DVStorageUUID {
		rel, err := dv.RelativePath()
		if err != nil {
			return deltalog.Add{}, fmt.Errorf("the deletion vector of %s: %w", f.Path, err)
		}
		abs := *dv
		abs.StorageType, abs.PathOrInlineDV = deltalog.DVStoragePath, dvBase(base)+"/"+escapePath(rel)
		add.DeletionVector = &abs
	}
	return add, nil
}

// dvBase is base as a deletion vector's "p" path takes it: a URL with a scheme, which
// delta-kernel (DuckDB, delta-rs) requires there, "file://" and the path for a local
// table.
func dvBase(base string) string {
	if strings.HasPrefix(base, "/") {
		return "file://" + base
	}
	return base
}

// escapePath escapes each segment of an object path for a URI.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
