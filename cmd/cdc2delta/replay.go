package main

import (
	"context"
	"flag"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
)

func replayCommand() command {
	return command{
		name:    "replay",
		summary: "rewind the consumer group so the next run replays from an offset, a time or the beginning",
		example: "cdc2delta replay --config cdc2delta.yaml --to-timestamp 2026-01-02T15:00:00Z\n" +
			"cdc2delta replay --config cdc2delta.yaml --topic sqlserver.sales.dbo.orders --partition 2 --to-offset 1200",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			cf := addConfigFlags(fs)
			topic := fs.String("topic", "", "only this topic (default: every configured topic)")
			partition := fs.Int("partition", -1, "only this partition (needs --topic)")
			toOffset := fs.Int64("to-offset", -1, "replay from this offset")
			toTime := fs.String("to-timestamp", "", "replay from the first record at or after this time (RFC 3339 or a date)")
			toEarliest := fs.Bool("to-earliest", false, "replay from the start of each partition")
			return func(ctx context.Context, args []string) error {
				c, err := cf.load(args, e.lookup)
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
				cl, adm, err := newAdmin(c.Kafka)
				if err != nil {
					return err
				}
				defer cl.Close()
				groups, err := adm.DescribeGroups(ctx, c.Kafka.GroupID)
				if err != nil {
					return fmt.Errorf("describing group %s: %w", c.Kafka.GroupID, err)
				}
				if g, ok := groups[c.Kafka.GroupID]; ok && len(g.Members) > 0 {
					return fmt.Errorf("group %s has %d active members: stop every cdc2delta instance first, "+
						"since Kafka only lets an empty group's offsets be reset", c.Kafka.GroupID, len(g.Members))
				}
				topics, err := resolveTopics(ctx, adm, c.Kafka)
				if err != nil {
					return err
				}
				if *topic != "" {
					if !slices.Contains(topics, *topic) {
						return usagef("--topic %q is not one of the configured topics", *topic)
					}
					topics = []string{*topic}
				}
				var listed kadm.ListedOffsets
				switch {
				case *toEarliest:
					listed, err = adm.ListStartOffsets(ctx, topics...)
				case *toTime != "":
					ts, perr := parseTime(*toTime)
					if perr != nil {
						return perr
					}
					listed, err = adm.ListOffsetsAfterMilli(ctx, ts.UnixMilli(), topics...)
				default:
					listed, err = adm.ListStartOffsets(ctx, topics...)
				}
				if err == nil {
					err = listed.Error()
				}
				if err != nil {
					return fmt.Errorf("listing offsets: %w", err)
				}
				// Empty metadata marks the commit as an operator's reset, which run honours
				// as a replay (ADR 0020); the per-row position guard keeps it idempotent.
				var to kadm.Offsets
				listed.Each(func(o kadm.ListedOffset) {
					if *partition >= 0 && o.Partition != int32(*partition) {
						return
					}
					at := o.Offset
					if *toOffset >= 0 {
						at = max(o.Offset, *toOffset) // never below the log start
					}
					to.AddOffset(o.Topic, o.Partition, at, -1)
				})
				if len(to) == 0 {
					return usagef("no partition matches")
				}
				resp, err := adm.CommitOffsets(ctx, c.Kafka.GroupID, to)
				if err == nil {
					err = resp.Error()
				}
				if err != nil {
					return fmt.Errorf("committing offsets of group %s: %w", c.Kafka.GroupID, err)
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
