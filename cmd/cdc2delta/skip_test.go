package main

import (
	"encoding/csv"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// TestSkipCommand stops `cdc2delta run` at a poison record, moves past it with
// `cdc2delta skip` and checks that the next run applies everything after it.
func TestSkipCommand(t *testing.T) {
	f := newRunFixture(t, fixtureOptions{partitions: 1})
	f.produce(60)
	res := f.prod.ProduceSync(t.Context(), &kgo.Record{Topic: f.orders.Topic(), Value: []byte("not avro")})
	require.NoError(t, res.FirstErr())
	poison := res[0].Record.Offset
	f.produce(60)

	// run stops the table at the poison record, naming the command.
	f.runUntilLogged(fmt.Sprintf("cdc2delta skip --config FILE --topic %s --partition 0 --offset %d", f.orders.Topic(), poison))
	require.Eventually(t, func() bool { return f.caughtUp(map[int32]int64{0: poison - 1}) }, 10*time.Second, 50*time.Millisecond)

	skip := func(args ...string) result {
		return cli(t, append([]string{"skip", "--config", f.cfg, "--topic", f.orders.Topic(), "--partition", "0"}, args...)...)
	}
	refusals := []struct {
		name string
		args []string
		want []string
	}{
		{"already applied", []string{"--offset", fmt.Sprint(poison - 1)}, []string{
			fmt.Sprintf("offset %d of %s/0 is behind the next unapplied offset %d (the table's txn is %d)", poison-1, f.orders.Topic(), poison, poison-1),
			fmt.Sprintf("next unapplied offset, here %d", poison)}},
		{"beyond", []string{"--offset", fmt.Sprint(poison + 1)}, []string{"would drop the records before it"}},
		{"no offset", nil, []string{"give --topic, --partition and --offset"}},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			r := skip(tc.args...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			for _, w := range tc.want {
				require.Contains(t, r.stderr, w)
			}
		})
	}
	r := cli(t, "skip", "--config", f.cfg, "--topic", "other.sales.dbo.x", "--partition", "0", "--offset", "0")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, `--topic "other.sales.dbo.x" is not one of the configured topics`)

	r = skip("--offset", fmt.Sprint(poison), "--reason", "producer bug")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("skipped %s[0] offset %d: table %s version ", f.orders.Topic(), poison, f.dir))
	require.Contains(t, r.stdout, "error:  decoding "+f.orders.Topic())
	require.Contains(t, r.stdout, "bad confluent wire header")
	require.Contains(t, r.stdout, "reason: producer bug")
	require.Contains(t, r.stdout, fmt.Sprintf("resumes %s[0] at offset %d from its txn", f.orders.Topic(), poison+1))
	snap, err := f.table().Snapshot(t.Context())
	require.NoError(t, err)
	v, _ := snap.TxnVersion(cdctable.TopicPartition{Topic: f.orders.Topic()}.AppID())
	require.Equal(t, poison, v)

	h := cli(t, "history", "--limit", "1", f.dir)
	require.Equal(t, exitOK, h.code, h.stderr)
	require.Contains(t, h.stdout, "SKIP RECORD")
	require.Contains(t, h.stdout, "producer bug")

	f.runUntilCaughtUp()
	r = skip("--offset", fmt.Sprint(poison))
	require.Equal(t, exitUsage, r.code, "skipping twice is refused")
	rows := f.rows()
	require.Len(t, rows, len(f.work.Rows(f.orders))+1, "the header and every source row: %v", rows)
}

// TestSkipCommandBeforeTable skips the first record of a table that has no
// Delta log yet, on kfake.
func TestSkipCommandBeforeTable(t *testing.T) {
	testSkipBeforeTable(t, fixtureOptions{partitions: 1})
}

// testSkipBeforeTable stops `cdc2delta run` at a poison record that comes
// before any record of its table, so the table has no Delta log. `skip`
// refuses any offset but the partition's next unapplied one without printing
// a replay; for that one it prints a replay command, and following it
// exactly drops no record but the poison one.
func testSkipBeforeTable(t *testing.T, o fixtureOptions) {
	f := newRunFixture(t, o)
	res := f.prod.ProduceSync(t.Context(), &kgo.Record{Topic: f.orders.Topic(), Value: []byte("not avro")})
	require.NoError(t, res.FirstErr())
	poison := res[0].Record.Offset
	f.produce(150)

	f.runUntilLogged(fmt.Sprintf("cdc2delta skip --config FILE --topic %s --partition 0 --offset %d", f.orders.Topic(), poison))
	_, err := f.table().Snapshot(t.Context())
	require.ErrorIs(t, err, deltalog.ErrNotExist, "the poison record came first: no table")

	skip := func(off int64) result {
		return cli(t, "skip", "--config", f.cfg, "--topic", f.orders.Topic(), "--partition", "0", "--offset", fmt.Sprint(off))
	}
	for _, off := range []int64{poison + 1, poison + 100} {
		r := skip(off)
		require.Equal(t, exitUsage, r.code, r.stderr)
		require.Contains(t, r.stderr, fmt.Sprintf("is beyond the next unapplied offset %d (the partition's log start", poison))
		require.NotContains(t, r.stderr, "replay", "no advice that drops the records before %d", off)
	}

	r := skip(poison)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "has no Delta log yet")
	m := regexp.MustCompile("`cdc2delta (replay [^`]*)`").FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)
	require.Equal(t, fmt.Sprintf("replay --config %s --topic %s --partition 0 --to-offset %d", f.cfg, f.orders.Topic(), poison+1), m[1])

	// Follow it exactly: every record but the poison one is applied.
	r = cli(t, strings.Fields(m[1])...)
	require.Equal(t, exitOK, r.code, r.stderr)
	f.runUntilCaughtUp()
	f.requireSourceRows()
}

// requireSourceRows checks that the table holds the source's rows: the key,
// customer and status of each, which a lost insert, update or delete changes.
func (f *runFixture) requireSourceRows() {
	t := f.t
	t.Helper()
	var want, got []string
	for _, row := range f.work.Rows(f.orders) {
		status := ""
		if row["status"] != nil {
			status = fmt.Sprint(row["status"])
		}
		want = append(want, fmt.Sprintf("%v,%v,%s", row["order_id"], row["customer_id"], status))
	}
	recs, err := csv.NewReader(strings.NewReader(strings.Join(f.rows(), "\n"))).ReadAll()
	require.NoError(t, err)
	for _, c := range recs {
		if c[0] != "order_id" { // the header
			got = append(got, strings.Join([]string{c[0], c[1], c[3]}, ","))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	require.Equal(t, want, got)
}
