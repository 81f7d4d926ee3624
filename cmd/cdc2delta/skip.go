package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"slices"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/operator"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

func skipCommand() command {
	return command{
		name:    "skip",
		summary: "move a table stopped by a bad record past it, with a Delta commit recording the record and why",
		example: "cdc2delta skip --config cdc2delta.yaml --topic sqlserver.sales.dbo.orders --partition 2 --offset 1200 --reason 'truncated by a producer bug'\n" +
			"# then restart cdc2delta run: the table resumes at offset 1201 from its txn",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			cf := addConfigFlags(fs, overrideBrokers, overrideGroup, overrideTablesPath, overrideLogLevel)
			topic := fs.String("topic", "", "the record's topic. Required")
			partition := fs.Int("partition", -1, "the record's partition. Required")
			offset := fs.Int64("offset", -1, "the record's offset: the one the table stopped at (its next unapplied offset). Required")
			reason := fs.String("reason", "", "why, recorded in the commit (DESCRIBE HISTORY shows it)")
			force := fs.Bool("force", false, "skip the record even if it decodes, dropping its change")
			timeout := addTimeoutFlag(fs)
			return func(ctx context.Context, args []string) error {
				c, err := cf.load(args, e.lookup)
				if err != nil {
					return err
				}
				d, err := timeout.get()
				if err != nil {
					return err
				}
				if *topic == "" || *partition < 0 || *offset < 0 {
					return usagef("give --topic, --partition and --offset of the record (the `table stopped` log line names them)")
				}
				if !configuredTopic(c.Kafka.Topics, c.Kafka.TopicRegex, *topic) {
					return usagef("--topic %q is not one of the configured topics (kafka.topics or kafka.topic_regex)", *topic)
				}
				router, err := route.NewRouter(c.Tables.Path)
				if err != nil {
					return usagef("tables.path: %v", err)
				}
				table, err := router.Route(*topic)
				if err != nil {
					return usagef("--topic %q: %v", *topic, err)
				}
				store, err := storeOpener(c.Storage)(ctx, table)
				if err != nil {
					return fmt.Errorf("opening %s: %w", table, err)
				}
				dec, err := newDecoder(c, newLogger(c.Log, e.stderr))
				if err != nil {
					return err
				}
				clientOpts, err := kafkaOpts(c.Kafka)
				if err != nil {
					return err
				}
				tp := cdctable.TopicPartition{Topic: *topic, Partition: int32(*partition)}
				res, err := operator.SkipRecord(ctx, operator.SkipOptions{
					Store: store, Table: table, Brokers: c.Kafka.Brokers, ClientOptions: clientOpts,
					Group: c.Kafka.GroupID, ResetOffset: c.Kafka.Reset, Decoder: dec,
					TopicPartition: tp, Offset: *offset, Reason: *reason, Force: *force, FetchTimeout: d,
				})
				if err != nil {
					return kafkaFailure(skipRefusal(err, cf.path, tp, *offset), c.Kafka)
				}
				fmt.Fprintf(e.stdout, "skipped %s[%d] offset %d: table %s version %d records it (%s)\n",
					res.Topic, res.Partition, res.Offset, res.Table, res.Version, operator.SkipOperation)
				switch {
				case res.DecodeError != "":
					fmt.Fprintf(e.stdout, "  error:  %s\n", res.DecodeError)
				case res.Forced:
					fmt.Fprintln(e.stdout, "  error:  none, the record decodes (--force): its change is not applied")
				}
				if *reason != "" {
					fmt.Fprintf(e.stdout, "  reason: %s\n", *reason)
				}
				fmt.Fprintf(e.stdout, "the consumer group is unchanged: restart `cdc2delta run --config %s` (every running instance) "+
					"and the table resumes %s[%d] at offset %d from its txn\n", cf.path, res.Topic, res.Partition, res.Offset+1)
				return nil
			}
		},
	}
}

// configuredTopic reports whether topic is one the configuration consumes.
func configuredTopic(topics []string, regex, topic string) bool {
	if regex == "" {
		return slices.Contains(topics, topic)
	}
	re, err := regexp.Compile(regex)
	return err == nil && re.MatchString(topic) // validated by config.Validate
}

// skipRefusal turns SkipRecord's refusals into usage errors that say what to do;
// other errors (Kafka, storage, the registry) stay runtime failures. A replay
// command is printed only where following it drops no record but this one.
func skipRefusal(err error, cfgPath string, tp cdctable.TopicPartition, offset int64) error {
	replay := fmt.Sprintf("cdc2delta replay --config %s --topic %s --partition %d --to-offset %d", cfgPath, tp.Topic, tp.Partition, offset+1)
	if ne, ok := errors.AsType[*operator.NotNextOffsetError](err); ok {
		return usagef("refused: %v.\nOnly the record a table stopped at can be skipped, and that is always its partition's "+
			"next unapplied offset, here %d: check it against the `table stopped` log line, /readyz or `cdc2delta offsets`", ne, ne.Next)
	}
	switch {
	case errors.Is(err, operator.ErrRecordDecodes):
		return usagef("refused: %v.\nA table stopped by bad input stops at a record that does not decode: check the offset against the "+
			"`table stopped` log line; to drop this change anyway, add --force", err)
	case errors.Is(err, operator.ErrRecordMissing):
		return usagef("refused: %v.\nCheck --topic, --partition and --offset against the `table stopped` log line", err)
	case errors.Is(err, operator.ErrNoTable):
		// SkipRecord verified the record: the partition starts at it, and
		// starts after it once the group's offset is offset+1.
		return usagef("not skipped: %v.\nUntil the table exists the consumer group's offset decides where the partition starts: "+
			"stop every instance and run `%s` (it moves only this partition, past this one record), then restart", err, replay)
	case errors.Is(err, operator.ErrLatestReset):
		return usagef("refused: %v; there is nothing to skip.\nTo have it read every record after offset %d instead, stop every instance "+
			"and run `%s`, then restart", err, offset, replay)
	}
	return err
}
