package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor"
	"github.com/cdc2delta/cdc2delta/processor/merge"
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
						rows = []offsetRow{}
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

// offsetRow is one partition's position. Lag counts the records not yet in Delta: the
// high watermark minus the next offset the table needs, which is txn+1, else the group
// offset, else 0 (the whole partition; log start offsets are not looked up).
type offsetRow struct {
	Table         string `json:"table"`
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	DeltaTxn      *int64 `json:"deltaTxn"`
	GroupOffset   *int64 `json:"groupOffset"`
	HighWatermark int64  `json:"highWatermark"`
	Lag           int64  `json:"lag"`
}

func partitionOffsets(ctx context.Context, c config.Config) ([]offsetRow, error) {
	cl, adm, err := newAdmin(c.Kafka)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	topics, err := resolveTopics(ctx, adm, c.Kafka)
	if err != nil {
		return nil, err
	}
	if len(topics) == 0 {
		return nil, nil
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("listing end offsets: %w", err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("listing end offsets: %w", err)
	}
	committed, err := adm.FetchOffsets(ctx, c.Kafka.GroupID)
	// A group that never committed has no offsets; some brokers say so with an error.
	if errors.Is(err, kerr.GroupIDNotFound) {
		committed, err = kadm.OffsetResponses{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fetching the offsets of group %s: %w", c.Kafka.GroupID, err)
	}
	router, err := processor.NewRouter(c.Tables.Path)
	if err != nil {
		return nil, usagef("tables.path: %v", err)
	}
	open := storeOpener(c.Storage.S3)
	snaps := map[string]*deltalog.Snapshot{}
	var rows []offsetRow
	for _, topic := range slices.Sorted(slices.Values(topics)) {
		path, err := router.Route(topic)
		if err != nil {
			continue // the processor does not consume unroutable topics either
		}
		snap, seen := snaps[path]
		if !seen {
			st, err := open(ctx, path)
			if err != nil {
				return nil, fmt.Errorf("opening %s: %w", path, err)
			}
			t, err := deltalog.Open(ctx, st)
			if err != nil {
				return nil, err
			}
			if snap, err = t.Snapshot(ctx); err != nil && !isNotExist(err) {
				return nil, fmt.Errorf("reading %s: %w", path, err)
			}
			snaps[path] = snap
		}
		for _, o := range sortedPartitions(ends[topic]) {
			r := offsetRow{Table: path, Topic: topic, Partition: o.Partition, HighWatermark: o.Offset}
			next := int64(0)
			if cr, ok := committed.Lookup(topic, o.Partition); ok && cr.Err == nil && cr.At >= 0 {
				at := cr.At
				r.GroupOffset, next = &at, at
			}
			if snap != nil {
				if v, ok := snap.TxnVersion(merge.TopicPartition{Topic: topic, Partition: o.Partition}.AppID()); ok {
					r.DeltaTxn, next = &v, v+1
				}
			}
			r.Lag = max(0, o.Offset-next)
			rows = append(rows, r)
		}
	}
	return rows, nil
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

func sortedPartitions(m map[int32]kadm.ListedOffset) []kadm.ListedOffset {
	out := make([]kadm.ListedOffset, 0, len(m))
	for _, o := range m {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b kadm.ListedOffset) int { return int(a.Partition - b.Partition) })
	return out
}
