package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/cdc2delta/cdc2delta/config"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

func verifyCommand() command {
	return command{
		name:    "verify",
		args:    "TABLE",
		summary: "check a table: no duplicate keys, deletion vectors, files, statistics, tombstones and key index agree",
		example: "cdc2delta verify ./tables/sales/dbo/orders\n" +
			"cdc2delta verify --max-problems 5 --index-dir /var/lib/cdc2delta/index/orders s3://lake/sales/dbo/orders",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			sf := addStoreFlags(fs, e)
			maxProblems := fs.Int("max-problems", 20, "list at most `n` problems (all are counted)")
			memMiB := fs.Int("memory-mib", 64, "hold at most about `MiB` of keys in memory; more are sorted through spill files")
			tempDir := fs.String("temp-dir", "", "`directory` for the spill files (default: the system's temporary directory)")
			indexDir := fs.String("index-dir", "", "also check the pipeline's on-disk key index in `directory`: default TABLE/_cdc2delta/index of a local table\n"+
				"when it exists,\n"+
				"else memory.key_index_dir/<the table path, URL-escaped>")
			return func(ctx context.Context, args []string) error {
				loc, err := oneTable(args)
				if err != nil {
					return err
				}
				if *maxProblems <= 0 || *memMiB <= 0 {
					return usagef("--max-problems and --memory-mib must be positive")
				}
				t, _, err := sf.openLatestReader(ctx, loc)
				if err != nil {
					return err
				}
				if *indexDir == "" {
					*indexDir = localIndexDir(loc)
				}
				rep, err := merge.VerifyTable(ctx, t.Store(), merge.VerifyOptions{
					MaxProblems: *maxProblems, MemoryBytes: int64(*memMiB) << 20, TempDir: *tempDir, IndexDir: *indexDir,
				})
				if errors.Is(err, cdctable.ErrHistoryTable) {
					return historyRefusal(loc, "verify checks")
				}
				if errors.Is(err, cdctable.ErrNotCDCTable) {
					return usagef("%s is not a table cdc2delta maintains: %v", loc, err)
				}
				if err != nil {
					return fmt.Errorf("verifying %s: %w", loc, err)
				}
				for _, p := range rep.Problems {
					fmt.Fprintln(e.stdout, p)
				}
				if !rep.OK() {
					return fmt.Errorf("%s %s (%d listed)", loc, rep.Summary(), len(rep.Problems))
				}
				fmt.Fprintf(e.stdout, "ok: %s %s\n", loc, rep.Summary())
				return nil
			}
		},
	}
}

// localIndexDir is the on-disk key index the pipeline keeps beside a local
// table (keyIndexDir without memory.key_index_dir) when it has one, else "".
func localIndexDir(loc string) string {
	if strings.Contains(loc, "://") {
		return ""
	}
	dir := keyIndexDir(config.Memory{}, loc)
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// historyRefusal refuses a command that checks or edits a current-state
// table (one row a key) on a history table (a row a version, ADR 0046).
func historyRefusal(loc, what string) error {
	return usagef("%s is a history table (SCD type 2; history: only or history_path): %s a current-state table, one row a key, "+
		"and a history table keeps a row a version; `cdc2delta describe`, `show` and `history` read it", loc, what)
}
