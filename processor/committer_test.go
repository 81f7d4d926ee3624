package processor

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestCommitCutByShutdownIsQuiet: a group commit that shutdown interrupts stays queued
// for the committer's last commit on the way out, without a warning (the quickstart
// printed "group offset commit failed ... context canceled" after Done); a commit that
// fails otherwise warns.
func TestCommitCutByShutdownIsQuiet(t *testing.T) {
	m, err := newMetrics(nil)
	require.NoError(t, err)
	var logs bytes.Buffer
	p := &Processor{log: slog.New(slog.NewTextHandler(&logs, nil)), m: m}
	tp := cdctable.TopicPartition{Topic: "t", Partition: 0}
	p.mu.parts = map[cdctable.TopicPartition]*partition{tp: {tp: tp}}
	p.client, err = kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"))
	require.NoError(t, err)
	defer p.client.Close()
	c := newCommitter(p)

	c.dirty[tp] = groupCommit{Next: 5}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c.commit(ctx, false)
	require.NotContains(t, logs.String(), "WARN")
	require.Equal(t, groupCommit{Next: 5}, c.dirty[tp], "queued for the last commit")

	ctx, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	c.commit(ctx, false)
	require.Contains(t, logs.String(), `level=WARN msg="group offset commit failed; retried with the next commit"`)
	require.Equal(t, groupCommit{Next: 5}, c.dirty[tp])
}
