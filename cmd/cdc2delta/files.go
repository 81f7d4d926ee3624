package main

import (
	"net/url"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// referencedPaths returns the store keys a logical file needs: its data file
// (percent-decoded, as add.path is a URI) and its deletion vector file, if any.
func referencedPaths(path string, dv *deltalog.DeletionVector) []string {
	p, err := url.PathUnescape(path)
	if err != nil {
		p = path
	}
	out := []string{p}
	if dv != nil {
		if rel, err := dv.RelativePath(); err == nil {
			out = append(out, rel)
		}
	}
	return out
}
