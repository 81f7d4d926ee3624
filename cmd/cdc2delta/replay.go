package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"

	"github.com/cdc2delta/cdc2delta/processor/operator"
)

func replayCommand() command {
	return command{
		name:    "replay",
		summary: "rewind the consumer group so the next run replays from an offset, a time or the beginning",
		example: "cdc2delta replay --config cdc2delta.yaml --to-timestamp 2026-01-02T15:00:00Z\n" +
			"cdc2delta replay --config cdc2delta.yaml --topic sqlserver.sales.dbo.orders --partition 2 --to-offset 1200",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			cf := addConfigFlags(fs, overrideBrokers, overrideGroup)
			topic := fs.String("topic", "", "only this topic (default: every configured topic)")
			partition := fs.Int("partition", -1, "only this partition (needs --topic)")
			toOffset := fs.Int64("to-offset", -1, "replay from this offset")
			toTime := fs.String("to-timestamp", "", "replay from the first record at or after this time (RFC 3339 or a date)")
			toEarliest := fs.Bool("to-earliest", false, "replay from the start of each partition")
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
				n := 0
				for _, set := range []bool{*toOffset >= 0, *toTime != "", *toEarliest} {
					if set {
						n++
					}
				}
				if n != 1 {
					return usagef("give exactly one of --to-offset, --to-timestamp, --to-earliest")
				}
				if *partition >= 0 && *topic == "" {
					return usagef("--partition needs --topic")
				}
				ro := operator.ReplayOptions{Group: c.Kafka.GroupID, Partition: int32(*partition), Offset: max(*toOffset, 0), Timeout: d}
				if *toTime != "" {
					if ro.At, err = parseTime(*toTime); err != nil {
						return err
					}
				}
				cl, adm, err := newAdmin(c.Kafka)
				if err != nil {
					return err
				}
				defer cl.Close()
				topics, err := resolveTopics(ctx, adm, d, c.Kafka)
				if err != nil {
					return kafkaFailure(err, c.Kafka)
				}
				if *topic != "" {
					if !slices.Contains(topics, *topic) {
						return usagef("--topic %q is not one of the configured topics", *topic)
					}
					topics = []string{*topic}
				}
				ro.Topics = topics
				to, err := operator.ReplayFrom(ctx, adm, ro)
				if errors.Is(err, operator.ErrNoPartition) {
					return usagef("no partition matches")
				}
				if err != nil {
					return kafkaFailure(err, c.Kafka)
				}
				for _, o := range to.Sorted() {
					fmt.Fprintf(e.stdout, "%s[%d] -> %d\n", o.Topic, o.Partition, o.At)
				}
				fmt.Fprintln(e.stdout, "the next `cdc2delta run` replays from these offsets")
				return nil
			}
		},
	}
}
