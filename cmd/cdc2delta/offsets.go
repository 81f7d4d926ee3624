package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"regexp"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/processor"
)

func offsetsCommand() command {
	return command{
		name:    "offsets",
		summary: "show per table and partition the Delta txn position, the group's offset, the high watermark and the lag",
		example: "cdc2delta offsets --config cdc2delta.yaml\ncdc2delta offsets --config cdc2delta.yaml --json | jq 'map(.lag) | add'",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			cf := addConfigFlags(fs)
			asJSON := fs.Bool("json", false, "print a JSON array")
			return func(ctx context.Context, args []string) error {
				c, err := cf.load(args, e.lookup)
				if err != nil {
					return err
				}
				rows, err := partitionOffsets(ctx, c)
				if err != nil {
					return err
				}
				if *asJSON {
					if rows == nil {
						rows = []processor.PartitionLag{}
					}
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(rows)
				}
				tt := newTextTable("TABLE", "TOPIC", "PARTITION", "DELTA_TXN", "GROUP_OFFSET", "HIGH_WATERMARK", "LAG")
				opt := func(v *int64) string {
					if v == nil {
						return "-"
					}
					return strconv.FormatInt(*v, 10)
				}
				for _, r := range rows {
					tt.add(r.Table, r.Topic, strconv.Itoa(int(r.Partition)), opt(r.DeltaTxn), opt(r.GroupOffset),
						strconv.FormatInt(r.HighWatermark, 10), strconv.FormatInt(r.Lag, 10))
				}
				return tt.write(e.stdout)
			}
		},
	}
}

// partitionOffsets is the lag of every partition the configuration consumes.
func partitionOffsets(ctx context.Context, c config.Config) ([]processor.PartitionLag, error) {
	cl, adm, err := newAdmin(c.Kafka)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	topics, err := resolveTopics(ctx, adm, c.Kafka)
	if err != nil {
		return nil, err
	}
	router, err := processor.NewRouter(c.Tables.Path)
	if err != nil {
		return nil, usagef("tables.path: %v", err)
	}
	return processor.Lag(ctx, adm, c.Kafka.GroupID, topics, router, storeOpener(c.Storage.S3))
}

// resolveTopics returns the configured topics, or those matching topic_regex.
func resolveTopics(ctx context.Context, adm *kadm.Client, k config.Kafka) ([]string, error) {
	if k.TopicRegex == "" {
		return k.Topics, nil
	}
	re, err := regexp.Compile(k.TopicRegex)
	if err != nil {
		return nil, usagef("kafka.topic_regex: %v", err)
	}
	all, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing topics: %w", err)
	}
	var topics []string
	for _, t := range all.Names() {
		if re.MatchString(t) {
			topics = append(topics, t)
		}
	}
	return topics, nil
}

// newAdmin connects an admin client with the configured connection settings.
func newAdmin(k config.Kafka) (*kgo.Client, *kadm.Client, error) {
	opts, err := kafkaOpts(k)
	if err != nil {
		return nil, nil, err
	}
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(k.Brokers...))...)
	if err != nil {
		return nil, nil, err
	}
	return cl, kadm.NewClient(cl), nil
}
