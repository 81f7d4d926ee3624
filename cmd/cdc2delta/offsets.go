package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/processor/operator"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

func offsetsCommand() command {
	return command{
		name:    "offsets",
		summary: "show per table and partition the Delta txn position, the group's offset, the high watermark and the lag",
		example: "cdc2delta offsets --config cdc2delta.yaml\ncdc2delta offsets --config cdc2delta.yaml --json | jq 'map(.lag) | add'",
		flags: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			cf := addConfigFlags(fs, overrideBrokers, overrideGroup, overrideTablesPath)
			asJSON := fs.Bool("json", false, "print a JSON array")
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
				rows, err := partitionOffsets(ctx, c, d)
				if err != nil {
					return kafkaFailure(err, c.Kafka)
				}
				if *asJSON {
					if rows == nil {
						rows = []operator.PartitionLag{}
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

// partitionOffsets is the lag of every partition the configuration consumes;
// each Kafka request waits at most timeout.
func partitionOffsets(ctx context.Context, c config.Config, timeout time.Duration) ([]operator.PartitionLag, error) {
	cl, adm, err := newAdmin(c.Kafka)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	topics, err := resolveTopics(ctx, adm, timeout, c.Kafka)
	if err != nil {
		return nil, err
	}
	router, err := route.NewRouter(c.Tables.Path)
	if err != nil {
		return nil, usagef("tables.path: %v", err)
	}
	return operator.Lag(ctx, adm, timeout, c.Kafka.GroupID, topics, router, storeOpener(c.Storage))
}

// resolveTopics returns the configured topics, or those matching topic_regex.
func resolveTopics(ctx context.Context, adm *kadm.Client, timeout time.Duration, k config.Kafka) ([]string, error) {
	topics, err := operator.Topics(ctx, adm, timeout, k.Topics, k.TopicRegex)
	if errors.Is(err, operator.ErrOptions) {
		return nil, usagef("kafka.topic_regex: %v", err)
	}
	return topics, err
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

// timeoutFlag is --timeout of the commands that talk to Kafka.
type timeoutFlag struct{ d *time.Duration }

func addTimeoutFlag(fs *flag.FlagSet) timeoutFlag {
	return timeoutFlag{fs.Duration("timeout", operator.DefaultTimeout,
		"how long each Kafka request waits for an answer before the command fails")}
}

func (t timeoutFlag) get() (time.Duration, error) {
	if *t.d <= 0 {
		return 0, usagef("--timeout %s: give a duration above 0, such as 30s", *t.d)
	}
	return *t.d, nil
}

// kafkaFailure says what to check when a Kafka request got no answer.
func kafkaFailure(err error, k config.Kafka) error {
	if !errors.Is(err, operator.ErrKafkaNoAnswer) {
		return err
	}
	return fmt.Errorf("%w\ncheck that kafka.brokers (%s) are Kafka brokers, up and reachable from here, and that "+
		"kafka.tls and kafka.sasl match their listener; --timeout sets how long each request waits",
		err, strings.Join(k.Brokers, ", "))
}
