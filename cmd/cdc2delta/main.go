// Command cdc2delta keeps Delta Lake tables in step with SQL Server through Debezium
// change events on Kafka, and maintains those tables (history, describe, show,
// checkpoint, restore, vacuum, optimize).
//
// Exit codes, which scripts can rely on:
//
//	0  success
//	1  runtime failure (storage, Kafka, a table that cannot be read or committed)
//	2  usage or configuration error (unknown command or flag, bad argument, invalid config)
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
