// Package operator holds the commands an operator runs against the tables
// and the consumer group while the processor is stopped or running: skip a
// record a table stopped at (SkipRecord), rewind the group (ReplayFrom) and
// report each partition's lag (Lag). It sits beside the processor as kadm
// sits beside kgo: it shares the on-disk contract (cdctable) and the topic
// routing (route) with the processor, not the pipeline.
//
// Skipping (skip.go): SkipRecord moves a table stopped at a poison record
// past it with a Delta commit holding only that partition's txn, after
// checking in the same snapshot that the record is the next unapplied one;
// the commit's conflict detection on the txn makes it exactly once.
//
// Every Kafka request waits at most a timeout (kafka.go): a broker that
// accepts connections and never answers fails the command with
// ErrKafkaNoAnswer instead of holding it.
package operator

import "errors"

// ErrOptions reports options an operator command refuses outright.
var ErrOptions = errors.New("operator: invalid options")
