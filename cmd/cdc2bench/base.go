package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// baseLoadChunk is how many base rows go into one Sink batch: it bounds the
// memory of building a 10M-row table.
const baseLoadChunk = 250_000

// buildBase writes the starting table of rows rows with cdc2delta's Sink:
// with deletion vectors enabled (protocol 3,7) or without (legacy protocol
// 1,2). Both variants hold the same rows, so one set of batches fits both.
func buildBase(ctx context.Context, dir string, seed uint64, rows int, dv bool) error {
	store, err := localstore.New(localstore.Options{Dir: dir, NoSync: true})
	if err != nil {
		return err
	}
	sink, err := merge.Open(ctx, merge.Options{Store: store, TableName: "orders", DeletionVectors: &dv, TailFileSize: -1})
	if err != nil {
		return fmt.Errorf("building base table %s: %w", dir, err)
	}
	cs := make([]change, 0, min(rows, baseLoadChunk))
	for start := 1; start <= rows; start += baseLoadChunk {
		cs = cs[:0]
		for id := start; id < start+baseLoadChunk && id <= rows; id++ {
			cs = append(cs, baseChange(seed, int64(id)))
		}
		if _, err := sink.Apply(ctx, processorBatch(cs)); err != nil {
			return fmt.Errorf("building base table %s: rows from %d: %w", dir, start, err)
		}
	}
	return nil
}

// copyTable copies a table directory. Data files are hard-linked when
// possible: no system rewrites a Parquet file in place, and the copies of a
// 10M-row table would otherwise fill the disk. Log files are copied.
func copyTable(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if strings.HasSuffix(p, ".parquet") && !strings.Contains(rel, "_delta_log") {
			if err := os.Link(p, to); err == nil {
				return nil
			}
		}
		return copyFile(p, to)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// dirBytes sums the sizes of the files under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}
