package main

import (
	"path/filepath"
	"strings"
)

// quickstartDirs returns the quickstart's local folder (broker data,
// registry, cdc2delta.yaml) and the root of its tables, both from --dir: a
// folder holds everything, with the tables in its "tables"; an object store
// URL holds the tables under URL/tables, and the rest stays in the default
// local folder, since the broker and the registry need a file system.
func quickstartDirs(dir string) (local, tablesRoot string, err error) {
	if strings.Contains(dir, "://") {
		if err := parseStoreURL(dir); err != nil {
			return "", "", usagef("--dir: %v", err)
		}
		local, err = filepath.Abs(defaultQuickstartDir)
		return local, strings.TrimSuffix(dir, "/") + "/tables", err
	}
	local, err = filepath.Abs(dir)
	return local, filepath.ToSlash(filepath.Join(local, "tables")), err
}
