package tableops

import (
	"context"
	"fmt"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// referencedPaths returns the store objects a logical file needs: its data file and
// its deletion vector file, if it has one.
func referencedPaths(key deltalog.FileKey, dv *deltalog.DeletionVector) []string {
	out := []string{key.Path()}
	if dv != nil {
		if rel, err := dv.RelativePath(); err == nil {
			out = append(out, rel)
		}
	}
	return out
}

// listObjects returns every object under the table root by path.
func listObjects(ctx context.Context, s deltalog.Store) (map[string]deltalog.ObjectInfo, error) {
	out := map[string]deltalog.ObjectInfo{}
	for o, err := range s.List(ctx, "", "") {
		if err != nil {
			return nil, fmt.Errorf("listing the table: %w", err)
		}
		out[o.Path] = o
	}
	return out, nil
}
