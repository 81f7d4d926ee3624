//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/localstore"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/control"
)

// TestPostgresControlTableEndToEnd runs Debezium's real PostgreSQL connector
// with provide.transaction.metadata=true over transactions that span two
// tables, while `cdc2delta run` applies them and keeps the control table by
// the transaction rule (control.transaction_topic). Every claim any control
// version made must be held by the table version it names (each change at or
// below it, read from the topics, applied there) and must never split a
// transaction; the claims must reach the last transaction; and the tables
// must equal the database, read by delta-rs and DuckDB.
func TestPostgresControlTableEndToEnd(t *testing.T) {
	pg := fulltier.PostgresServer(t)
	worker := fulltier.ConnectWorker(t)
	brokers := fulltier.KafkaBrokers(t)
	id := newPostgresDB(t, pg, "pgctl")
	pg.Exec(id, `
CREATE TABLE orders (id int PRIMARY KEY, xid bigint, n int, note text);
CREATE TABLE orderlines (id int PRIMARY KEY, order_id int, xid bigint, qty int);
INSERT INTO orders SELECT i, 0, 0, 'snapshot' FROM generate_series(1, 10) i;
INSERT INTO orderlines SELECT i, i, 0, 1 FROM generate_series(1, 10) i;`)
	cfg := fulltier.PostgresConnector(pg, id, id, "public.orders,public.orderlines")
	cfg["provide.transaction.metadata"] = "true"
	worker.Register(id, cfg)
	waitRecords(t, brokers, id+".public.orders", 10)

	topics := []string{id + ".public.orders", id + ".public.orderlines"}
	src := controlSource{
		brokers: brokers, group: id, topics: topics, tables: []string{"orders", "orderlines"},
		names:   []string{id + ".public.orders", id + ".public.orderlines"},
		txTopic: id + ".transaction",
		exec:    func(q string) string { return pg.Exec(id, q) },
	}
	root := t.TempDir()
	run := src.start(t, root, true)
	for chunk := range 3 {
		pg.Exec(id, controlWorkload(chunk*20, 20, "txid_current()"))
		if chunk == 1 {
			// A restart re-sends what was sent since the last committed
			// offsets, transaction events included.
			worker.Restart(id)
		}
		time.Sleep(time.Second)
	}
	src.finish(t, run, root, true)
	src.compare(t, root, []dbTable{
		{"orders", `SELECT id, xid, n, note FROM orders ORDER BY id`, []string{"id", "xid", "n", "note"}},
		{"orderlines", `SELECT id, order_id, xid, qty FROM orderlines ORDER BY id`, []string{"id", "order_id", "xid", "qty"}},
	})
}

// TestMariaDBControlTable runs Debezium's real MariaDB connector with
// provide.transaction.metadata=true. Its transactions are named by GTID,
// which bounds no change's binlog position: `cdc2delta run` with
// control.transaction_topic refuses them, naming the setting, claims
// nothing, and keeps applying the tables. A second run without it keeps the
// control table by the watermark rule, whose every claim must be held by the
// version it names and reach the last change.
func TestMariaDBControlTable(t *testing.T) {
	my := fulltier.MariaDBServer(t)
	worker := fulltier.ConnectWorker(t)
	brokers := fulltier.KafkaBrokers(t)
	id, cfg := newMariaDBSource(t, my, "myctl", "")
	my.Exec(id, `
CREATE TABLE orders (id int PRIMARY KEY, xid bigint, n int, note varchar(20));
CREATE TABLE orderlines (id int PRIMARY KEY, order_id int, xid bigint, qty int);
INSERT INTO orders SELECT seq, 0, 0, 'snapshot' FROM seq_1_to_10;
INSERT INTO orderlines SELECT seq, seq, 0, 1 FROM seq_1_to_10;`)
	cfg["provide.transaction.metadata"] = "true"
	worker.Register(id, cfg)
	waitRecords(t, brokers, id+"."+id+".orders", 10)

	src := controlSource{
		brokers: brokers, group: id, topics: []string{id + "." + id + ".orders", id + "." + id + ".orderlines"},
		tables: []string{"orders", "orderlines"}, names: []string{id + "." + id + ".orders", id + "." + id + ".orderlines"},
		txTopic: id + ".transaction",
		exec:    func(q string) string { return my.Exec(id, q) },
	}
	for chunk := range 2 {
		my.Exec(id, controlWorkload(chunk*20, 20, "@@gtid_seq_no"))
	}
	waitRecords(t, brokers, src.txTopic, 2)
	tables := []dbTable{
		{"orders", `SELECT id, xid, n, note FROM orders ORDER BY id`, []string{"id", "xid", "n", "note"}},
		{"orderlines", `SELECT id, order_id, xid, qty FROM orderlines ORDER BY id`, []string{"id", "order_id", "xid", "qty"}},
	}

	// With the transaction topic: refused by name, no claim, tables applied.
	refused := t.TempDir()
	run := src.start(t, refused, true)
	ends := waitTopicsQuiet(t, brokers, src.topics)
	ok := poll(90*time.Second, 200*time.Millisecond, func() bool {
		return strings.Contains(run.log.String(), "control.transaction_topic") && src.reached(t, refused, ends)
	})
	log := run.stop()
	require.True(t, ok, "no refusal naming control.transaction_topic, or tables behind; log:\n%s", log)
	require.Contains(t, log, "transaction metadata refused")
	require.Contains(t, log, "remove control.transaction_topic")
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "control.transaction_topic") {
			t.Logf("refusal: %s", line)
			break
		}
	}
	if st, err := localstore.New(localstore.Options{Dir: filepath.Join(refused, "control")}); err == nil {
		if ctl, err := control.Open(t.Context(), st, nil); err == nil {
			if s, err := ctl.Read(t.Context()); err == nil {
				for _, r := range s.Tables {
					require.Equal(t, codecs.Position{}, r.CompleteThrough, "refused, yet %s claims", r.Name)
				}
				require.Empty(t, s.Groups)
			}
		}
	}
	src.compare(t, refused, tables)

	// The watermark rule: every claim held, the last change reached.
	src.group += "w"
	water := t.TempDir()
	run = src.start(t, water, false)
	src.finish(t, run, water, false)
	src.compare(t, water, tables)
}

// controlWorkload is n transactions from first on: most insert an order
// and its two lines and update another order (both tables, recording the
// transaction's id, xid, in the rows); every fourth updates lines alone;
// every seventh also deletes a line.
func controlWorkload(first, n int, xid string) string {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		b.WriteString("BEGIN;\n")
		if i%4 == 3 {
			fmt.Fprintf(&b, "UPDATE orderlines SET qty = qty + 1, xid = %s WHERE order_id = %d;\n", xid, i%10+1)
		} else {
			fmt.Fprintf(&b, "INSERT INTO orders VALUES (%d, %s, %d, 'tx');\n", 100+i, xid, i)
			fmt.Fprintf(&b, "INSERT INTO orderlines VALUES (%d, %d, %s, 1), (%d, %d, %s, 2);\n", 1000+2*i, 100+i, xid, 1001+2*i, 100+i, xid)
			fmt.Fprintf(&b, "UPDATE orders SET n = n + 1, xid = %s WHERE id = %d;\n", xid, i%10+1)
		}
		if i%7 == 6 {
			fmt.Fprintf(&b, "DELETE FROM orderlines WHERE id = %d;\n", 1000+2*(i-1))
		}
		b.WriteString("COMMIT;\n")
	}
	return b.String()
}

// controlSource is a connector's tables, as cdc2delta applies them with a
// control table.
type controlSource struct {
	brokers []string
	group   string
	// topics, tables (their directories) and names (database.schema.table
	// as the control table names them) are aligned.
	topics, tables, names []string
	txTopic               string
	exec                  func(string) string
}

// start runs `cdc2delta run` into root with a control table at
// root/control, one group of every table, and the transaction rule when
// transactions is set.
func (s controlSource) start(t *testing.T, root string, transactions bool) *inProcessRun {
	t.Helper()
	names := make([]string, len(s.names))
	for i, name := range s.names {
		names[i] = fmt.Sprintf("%q", name)
	}
	tx := ""
	if transactions {
		tx = fmt.Sprintf("transaction_topic: %q, ", s.txTopic)
	}
	cfgPath := writeRunConfig(t, sourceRun{
		brokers: s.brokers, group: s.group, topics: s.topics, root: root, maxRecords: 7,
		extra: fmt.Sprintf("control: {path: \"%s/control\", interval: 200ms, %sgroups: [{name: all, tables: [%s]}]}\n",
			filepath.ToSlash(root), tx, strings.Join(names, ", ")),
	})
	return (&runFixture{t: t, cfg: cfgPath}).start()
}

// reached reports whether every table has applied its topic through ends.
func (s controlSource) reached(t *testing.T, root string, ends map[string]int64) bool {
	for i, topic := range s.topics {
		if !tableReached(t, filepath.Join(root, s.tables[i]), topic, ends[topic]) {
			return false
		}
	}
	return true
}

// finish waits until the connector has sent everything, the tables have
// applied it and the control table claims every table and the group
// complete through the last change; stops the run; and checks every claim
// of every control table version against the versions it names.
func (s controlSource) finish(t *testing.T, run *inProcessRun, root string, transactions bool) {
	t.Helper()
	ends := waitTopicsQuiet(t, s.brokers, s.topics)
	recs := s.records(t)
	var last codecs.Position
	for _, rs := range recs {
		for _, r := range rs {
			if r.pos.Compare(last) > 0 {
				last = r.pos
			}
		}
	}
	ctl := s.control(t, root)
	reachedAll := func() bool {
		if !s.reached(t, root, ends) {
			return false
		}
		st, err := ctl.Read(t.Context())
		if err != nil || len(st.Tables) != len(s.names) {
			return false
		}
		for _, r := range st.Tables {
			if r.CompleteThrough.Compare(last) < 0 {
				return false
			}
		}
		g, ok := st.Groups["all"]
		return ok && g.CompleteThrough.Compare(last) >= 0
	}
	ok := poll(120*time.Second, 200*time.Millisecond, reachedAll)
	log := run.stop()
	if !ok {
		st, err := ctl.Read(t.Context())
		require.NoError(t, err)
		t.Fatalf("control table does not reach the last change %s within 120s: %+v %+v; log:\n%s", last, st.Tables, st.Groups, log)
	}
	s.checkClaims(t, root, ctl, recs, transactions)
}

// controlRecord is one change record of a table's topic, read with
// encoding/json.
type controlRecord struct {
	key    string
	offset int64
	pos    codecs.Position
	tx     string // source.txId (PostgreSQL) or the binlog GTID
}

// records reads every record of the tables' topics (single partitions).
func (s controlSource) records(t *testing.T) map[string][]controlRecord {
	t.Helper()
	out := map[string][]controlRecord{}
	for _, topic := range s.topics {
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
		require.NoError(t, err)
		ends := waitTopicsQuiet(t, s.brokers, []string{topic})
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		var got []controlRecord
		for len(got) == 0 || got[len(got)-1].offset < ends[topic] {
			fs := cl.PollFetches(ctx)
			require.NoError(t, ctx.Err(), "reading %s", topic)
			fs.EachRecord(func(r *kgo.Record) {
				rec := controlRecord{key: string(r.Key), offset: r.Offset}
				if r.Value != nil {
					var v struct {
						Payload struct {
							Source map[string]any `json:"source"`
						} `json:"payload"`
					}
					d := json.NewDecoder(strings.NewReader(string(r.Value)))
					d.UseNumber()
					require.NoError(t, d.Decode(&v))
					rec.pos, rec.tx = sourcePosition(t, v.Payload.Source)
				}
				got = append(got, rec)
			})
		}
		cancel()
		cl.Close()
		out[topic] = got
	}
	return out
}

// sourcePosition is a source block's position, as ADR 0044 orders it, and
// its transaction.
func sourcePosition(t *testing.T, src map[string]any) (codecs.Position, string) {
	num := func(k string) int64 {
		n, err := src[k].(json.Number).Int64()
		require.NoError(t, err, "source.%s", k)
		return n
	}
	snap := src["snapshot"] != nil && src["snapshot"] != "false"
	if seq, ok := src["sequence"].(string); ok {
		p, err := codecs.PostgresPosition(num("lsn"), seq, snap)
		require.NoError(t, err)
		return p, fmt.Sprint(src["txId"])
	}
	p, err := codecs.MySQLPosition(src["file"].(string), num("pos"), num("row"), snap)
	require.NoError(t, err)
	return p, fmt.Sprint(src["gtid"])
}

func (s controlSource) control(t *testing.T, root string) *control.Table {
	t.Helper()
	st, err := localstore.New(localstore.Options{Dir: filepath.Join(root, "control")})
	require.NoError(t, err)
	ctl, err := control.Open(t.Context(), st, nil)
	require.NoError(t, err)
	return ctl
}

// checkClaims requires of every claim of every control version: the table
// version it names has applied each change at or below it (a re-delivered
// change once); under the transaction rule no transaction is split (its
// changes in every table all at or below the claim, or none); and the
// group's finalized_until never moves back.
func (s controlSource) checkClaims(t *testing.T, root string, ctl *control.Table, recs map[string][]controlRecord, transactions bool) {
	t.Helper()
	topicOf := map[string]string{}
	dirOf := map[string]string{}
	for i, n := range s.names {
		topicOf[n], dirOf[n] = s.topics[i], filepath.Join(root, s.tables[i])
	}
	txns := map[string]int64{}
	appliedAt := func(name string, v int64) int64 {
		k := name + "@" + strconv.FormatInt(v, 10)
		if o, ok := txns[k]; ok {
			return o
		}
		st, err := localstore.New(localstore.Options{Dir: dirOf[name]})
		require.NoError(t, err)
		tbl, err := deltalog.Open(t.Context(), st)
		require.NoError(t, err)
		snap, err := tbl.SnapshotAt(t.Context(), v)
		require.NoError(t, err)
		o, ok := snap.TxnVersion(cdctable.TopicPartition{Topic: topicOf[name], Partition: 0}.AppID())
		if !ok {
			o = -1
		}
		txns[k] = o
		return o
	}
	// Each transaction's changes, over every table.
	txChanges := map[string][]codecs.Position{}
	for _, rs := range recs {
		for _, r := range rs {
			if r.tx != "" && r.tx != "<nil>" && r.pos != (codecs.Position{}) {
				txChanges[r.tx] = append(txChanges[r.tx], r.pos)
			}
		}
	}
	claims := 0
	check := func(r control.Row) {
		x := r.CompleteThrough
		if x == (codecs.Position{}) {
			return
		}
		claims++
		if r.Kind == control.KindTable {
			held := appliedAt(r.Name, r.DeltaVersion)
			done := map[string]bool{}
			for _, rec := range recs[topicOf[r.Name]] {
				if rec.pos == (codecs.Position{}) || rec.pos.Compare(x) > 0 {
					continue // a tombstone, or above the claim
				}
				id := rec.key + rec.pos.String()
				done[id] = done[id] || rec.offset <= held
			}
			for id, ok := range done {
				require.True(t, ok, "%s claims complete through %s at version %d, which has not applied %s", r.Name, x, r.DeltaVersion, id)
			}
		}
		if transactions {
			for tx, ps := range txChanges {
				below := 0
				for _, p := range ps {
					if p.Compare(x) <= 0 {
						below++
					}
				}
				require.True(t, below == 0 || below == len(ps), "%s %s claims complete through %s, splitting transaction %s (%d of %d changes at or below)", r.Kind, r.Name, x, tx, below, len(ps))
			}
		}
	}
	latest, err := ctl.Read(t.Context())
	require.NoError(t, err)
	var finalized []int64
	for v := int64(1); v <= latest.Version; v++ {
		st, err := ctl.ReadAt(t.Context(), v)
		require.NoError(t, err)
		for _, name := range slices.Sorted(maps.Keys(st.Tables)) {
			check(st.Tables[name])
		}
		for _, rows := range st.Versions {
			for _, r := range rows {
				check(r)
			}
		}
		if g, ok := st.Groups["all"]; ok {
			check(g)
			finalized = append(finalized, g.FinalizedUntil.UnixMicro())
		}
	}
	require.True(t, slices.IsSorted(finalized), "finalized_until never moves back")
	require.Greater(t, claims, 10)
	t.Logf("control table: %d versions, %d claims checked, %d transactions", latest.Version, claims, len(txChanges))
}

// compare requires every table under root, read by delta-rs and DuckDB,
// to print as its query against the database.
func (s controlSource) compare(t *testing.T, root string, tables []dbTable) {
	t.Helper()
	for _, tc := range tables {
		t.Run(tc.table, func(t *testing.T) {
			want := strings.TrimSpace(s.exec(tc.query))
			require.NotEmpty(t, want)
			path := filepath.Join(root, tc.table)
			for _, got := range fulltier.Read(t,
				fulltier.Request{Engine: fulltier.DeltaRS, Path: path, ReadOptions: fulltier.ReadOptions{Filter: "true"}},
				fulltier.Request{Engine: fulltier.DuckDB, Path: path}) {
				require.Empty(t, got.Err, "%s", got.Engine)
				require.Equal(t, want, deltaText(got, tc.cols), "%s reading %s", got.Engine, tc.table)
			}
		})
	}
}
