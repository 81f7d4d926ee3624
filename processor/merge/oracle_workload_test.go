package merge_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/decimal128"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// The oracle's workloads: a random source table's history in source order,
// spread over Kafka partitions by key, with re-deliveries, interleaved as a
// consumer receives it, and cut into micro-batches.

const oracleTopic = "db.dbo.t"

var (
	oracleTable = codecs.TableID{Database: "db", Schema: "dbo", Table: "t"}
	kindInt     = codecs.Type{Kind: codecs.KindInteger}
	kindStr     = codecs.Type{Kind: codecs.KindString}

	// oracleV1 has a LOB-like string and binary that updates may leave
	// unavailable, and a small column to partition by.
	oracleV1 = &codecs.Layout{SchemaID: 1, Name: "db.dbo.t.Value", Columns: []codecs.Column{
		{Name: "id", Type: kindInt},
		{Name: "name", Type: kindStr, Nullable: true},
		{Name: "qty", Type: codecs.Type{Kind: codecs.KindLong}, Nullable: true},
		{Name: "price", Type: codecs.DecimalType(10, 2), Nullable: true},
		{Name: "grp", Type: codecs.Type{Kind: codecs.KindShort}, Nullable: true},
		{Name: "notes", Type: kindStr, Nullable: true, SourceType: "NVARCHAR(max)"},
		{Name: "doc", Type: codecs.Type{Kind: codecs.KindBinary}, Nullable: true, SourceType: "VARBINARY(max)"},
	}}
	// oracleV2 adds a nullable LOB column, as an ALTER TABLE mid-stream does.
	oracleV2 = &codecs.Layout{SchemaID: 2, Name: "db.dbo.t.Value", Columns: append(slices.Clone(oracleV1.Columns),
		codecs.Column{Name: "memo", Type: kindStr, Nullable: true, SourceType: "NVARCHAR(max)"})}
	oracleKey = &codecs.Layout{SchemaID: 3, Name: "db.dbo.t.Key", Columns: []codecs.Column{{Name: "id", Type: kindInt}}}

	lobColumns = map[string]bool{"notes": true, "doc": true, "memo": true}
)

// oracleConfig is one run's shape, drawn from its seed.
type oracleConfig struct {
	keys, transactions, partitions int
	snapshot                       bool    // start with a snapshot of the rows that exist
	evolveAt                       int     // transaction switching to oracleV2, -1 never
	placeholder                    float64 // chance an unchanged LOB column is unavailable
	deleteRatio, keyChange         float64
	truncate, resnapshot           float64 // chance per transaction
	truncateEarly                  bool    // the second transaction truncates: it may come before the table exists
	redeliver, duplicate, restart  float64 // chance per event (restart: the connector re-sends recent events)
	tombstones                     bool    // Debezium's null-value record after each delete
	maxBatch                       int
	perPoll                        bool // a batch is one fetch of one partition
	soft, cow, partitioned         bool
	targetFileSize                 int64
	checkpointEvery                int
	crash, fault                   float64 // chance per batch of a restart, and of a failing store
}

func newOracleConfig(rng *rand.Rand) oracleConfig {
	pick := func(p float64) bool { return rng.Float64() < p }
	c := oracleConfig{
		keys:            3 + rng.IntN(18),
		transactions:    10 + rng.IntN(50),
		partitions:      1 + rng.IntN(3),
		snapshot:        pick(0.75),
		evolveAt:        -1,
		placeholder:     []float64{0, 0.5, 0.9, 1}[rng.IntN(4)],
		deleteRatio:     0.05 + rng.Float64()*0.25,
		keyChange:       rng.Float64() * 0.15,
		redeliver:       rng.Float64() * 0.2,
		duplicate:       rng.Float64() * 0.1,
		restart:         rng.Float64() * 0.02,
		tombstones:      pick(0.7),
		maxBatch:        []int{2, 4, 8, 20, 60, 1000}[rng.IntN(6)],
		perPoll:         pick(0.2),
		soft:            pick(0.4),
		cow:             pick(0.4),
		partitioned:     pick(0.25),
		checkpointEvery: 2 + rng.IntN(10),
		targetFileSize:  []int64{1 << 10, 4 << 10, 1 << 20}[rng.IntN(3)],
		crash:           rng.Float64() * 0.15,
		fault:           rng.Float64() * 0.25,
	}
	if pick(0.5) {
		c.evolveAt = rng.IntN(c.transactions)
	}
	if pick(0.4) {
		c.truncate = rng.Float64() * 0.04
		c.truncateEarly = pick(0.3)
	}
	if pick(0.4) {
		c.resnapshot = rng.Float64() * 0.03
	}
	return c
}

// source is the simulated SQL Server table and its Debezium event stream.
type source struct {
	rng    *rand.Rand
	cfg    oracleConfig
	layout *codecs.Layout
	rows   map[int32]map[string]any // the source's rows, by key
	lsn    uint64
	millis int64
	events []codecs.Change // in source order
}

func lsn(n uint64) codecs.LSN {
	var l codecs.LSN
	binary.BigEndian.PutUint64(l[2:], n)
	return l
}

func (s *source) next() codecs.LSN { s.lsn++; return lsn(s.lsn) }

// history generates the source's events in source order.
func history(rng *rand.Rand, cfg oracleConfig) *source {
	s := &source{rng: rng, cfg: cfg, layout: oracleV1, rows: map[int32]map[string]any{}, lsn: 100, millis: 1_700_000_000_000}
	for id := range int32(cfg.keys) {
		if rng.IntN(3) > 0 {
			s.rows[id] = s.newRow(id)
		}
	}
	if cfg.snapshot {
		s.snapshot(lsn(s.lsn))
	}
	for tx := range cfg.transactions {
		s.millis += int64(rng.IntN(4))
		if tx == cfg.evolveAt {
			s.layout = oracleV2
			for _, r := range s.rows {
				r["memo"] = nil
			}
		}
		switch {
		case tx == 1 && cfg.truncateEarly || rng.Float64() < cfg.truncate:
			s.events = append(s.events, codecs.Change{Op: codecs.OpTruncate, Table: oracleTable, Pos: codecs.Position{Commit: s.next(), Change: s.next(), Serial: 1}, CommitMillis: s.millis})
			clear(s.rows)
			continue
		case rng.Float64() < cfg.resnapshot:
			// A new snapshot (snapshot.mode=always after a restart) at the
			// log's current end.
			s.snapshot(s.next())
			continue
		}
		commit := s.next()
		for range 1 + rng.IntN(3) {
			s.change(commit)
		}
	}
	return s
}

// snapshot emits an op=r event of every row at commit, change LSN and serial absent.
func (s *source) snapshot(commit codecs.LSN) {
	for _, id := range sortedKeys(s.rows) {
		s.emit(codecs.OpRead, id, s.rows[id], nil, codecs.Position{Commit: commit})
	}
}

// change makes one insert, update, delete or key change in the transaction.
func (s *source) change(commit codecs.LSN) {
	id := int32(s.rng.IntN(s.cfg.keys))
	p := codecs.Position{Commit: commit, Change: s.next(), Serial: 1}
	old, exists := s.rows[id]
	switch {
	case !exists:
		s.rows[id] = s.newRow(id)
		s.emit(codecs.OpCreate, id, s.rows[id], nil, p)
	case s.rng.Float64() < s.cfg.keyChange:
		// SQL Server logs a key update as a delete and an insert at one
		// change LSN: d with serial 1, c of the new key with serial 2.
		to := int32(s.rng.IntN(s.cfg.keys))
		if _, taken := s.rows[to]; taken {
			return
		}
		s.emit(codecs.OpDelete, id, old, nil, p)
		delete(s.rows, id)
		moved := clone(old)
		moved["id"] = to
		s.rows[to] = moved
		p.Serial = 2
		s.emit(codecs.OpCreate, to, moved, nil, p)
	case s.rng.Float64() < s.cfg.deleteRatio:
		s.emit(codecs.OpDelete, id, old, nil, p)
		delete(s.rows, id)
	default:
		row := clone(old)
		changed := map[string]bool{}
		for range 1 + s.rng.IntN(2) {
			col := s.layout.Columns[1+s.rng.IntN(len(s.layout.Columns)-1)].Name
			row[col] = s.value(col)
			changed[col] = true
		}
		// Unchanged LOBs may come as Debezium's placeholder.
		var unavailable []string
		for _, c := range s.layout.Columns {
			if lobColumns[c.Name] && !changed[c.Name] && s.rng.Float64() < s.cfg.placeholder {
				unavailable = append(unavailable, c.Name)
			}
		}
		s.rows[id] = row
		p.Serial = 2 // an update is two CDC rows at one position
		s.emit(codecs.OpUpdate, id, row, unavailable, p)
	}
}

func (s *source) emit(op codecs.Op, id int32, row map[string]any, unavailable []string, p codecs.Position) {
	c := codecs.Change{Op: op, Table: oracleTable, Pos: p, CommitMillis: s.millis,
		Layout: s.layout, KeyLayout: oracleKey, Key: []any{id}, KeyIndex: []int{0}}
	c.Row = make([]any, len(s.layout.Columns))
	for i, col := range s.layout.Columns {
		if slices.Contains(unavailable, col.Name) {
			c.Unavailable = append(c.Unavailable, i)
			continue
		}
		c.Row[i] = row[col.Name]
	}
	s.events = append(s.events, c)
}

func (s *source) newRow(id int32) map[string]any {
	r := map[string]any{"id": id}
	for _, c := range s.layout.Columns[1:] {
		r[c.Name] = s.value(c.Name)
	}
	return r
}

func (s *source) value(col string) any {
	if s.rng.IntN(6) == 0 {
		return nil
	}
	switch col {
	case "name":
		return fmt.Sprintf("n%d", s.rng.IntN(1000))
	case "qty":
		return s.rng.Int64N(1<<40) - 1<<39
	case "price":
		return decimal128.FromInt64(s.rng.Int64N(2_000_000) - 1_000_000)
	case "grp":
		return int16(s.rng.IntN(3))
	case "notes", "memo":
		return fmt.Sprintf("%s lob %d", col, s.rng.IntN(1_000_000))
	case "doc":
		b := make([]byte, s.rng.IntN(40))
		for i := range b {
			b[i] = byte(s.rng.UintN(256))
		}
		return b
	}
	panic("no column " + col)
}

func clone(r map[string]any) map[string]any {
	out := make(map[string]any, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[int32]V) []int32 {
	ks := make([]int32, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// deliver spreads the events over partitions by key (a truncate, which has
// no key, to any), adds re-deliveries, duplicates and tombstones, and
// interleaves the partitions as a consumer receives them: fetches of a few
// records of one partition.
func deliver(rng *rand.Rand, cfg oracleConfig, events []codecs.Change) [][]cdcmodel.Record {
	home := map[any]int32{}
	logs := make([][]cdcmodel.Record, cfg.partitions)
	add := func(p int32, c codecs.Change) {
		logs[p] = append(logs[p], cdcmodel.Record{TopicPartition: cdcmodel.TopicPartition{Topic: oracleTopic, Partition: p}, Offset: int64(len(logs[p])), Change: c})
	}
	partition := func(c codecs.Change) int32 {
		if c.Op == codecs.OpTruncate {
			return int32(rng.IntN(cfg.partitions))
		}
		p, ok := home[c.Key[0]]
		if !ok {
			p = int32(rng.IntN(cfg.partitions))
			home[c.Key[0]] = p
		}
		return p
	}
	for i, c := range events {
		p := partition(c)
		add(p, c)
		if c.Op == codecs.OpDelete && cfg.tombstones {
			add(p, codecs.Change{Op: codecs.OpTombstone, KeyLayout: oracleKey, Key: c.Key})
		}
		if rng.Float64() < cfg.duplicate {
			add(p, c)
		}
		if rng.Float64() < cfg.redeliver {
			old := logs[p][rng.IntN(len(logs[p]))]
			add(p, old.Change)
		}
		if rng.Float64() < cfg.restart {
			// The connector restarts from an earlier offset and sends the
			// last few events again, in source order.
			for _, c := range events[max(0, i-rng.IntN(10)) : i+1] {
				add(partition(c), c)
			}
		}
	}
	var out [][]cdcmodel.Record
	for {
		var open []int
		for p := range logs {
			if len(logs[p]) > 0 {
				open = append(open, p)
			}
		}
		if len(open) == 0 {
			return out
		}
		p := open[rng.IntN(len(open))]
		n := min(len(logs[p]), 1+rng.IntN(4))
		out = append(out, logs[p][:n])
		logs[p] = logs[p][n:]
	}
}

// batches cuts the fetches into micro-batches: one per fetch, or of random
// sizes.
func batches(rng *rand.Rand, cfg oracleConfig, fetches [][]cdcmodel.Record) [][]cdcmodel.Record {
	if cfg.perPoll {
		return fetches
	}
	var recs []cdcmodel.Record
	for _, f := range fetches {
		recs = append(recs, f...)
	}
	var out [][]cdcmodel.Record
	for len(recs) > 0 {
		n := min(len(recs), 1+rng.IntN(cfg.maxBatch))
		out = append(out, recs[:n])
		recs = recs[n:]
	}
	return out
}

// resplit cuts a failed batch's records and the batches after it into new
// batches, as a restart or rebalance that re-reads them from the txn
// versions on with other batch caps does. The first cut falls inside the
// failed batch, or for a batch of one record after a record of the next,
// so no new batch is the failed one (unless nothing follows it). intN
// draws the cuts.
func resplit(intN func(int) int, cfg oracleConfig, failed []cdcmodel.Record, next [][]cdcmodel.Record) [][]cdcmodel.Record {
	recs := slices.Clone(failed)
	for _, b := range next {
		recs = append(recs, b...)
	}
	first := len(failed)
	if len(failed) > 1 {
		first = 1 + intN(len(failed)-1)
	} else if len(recs) > 1 {
		first = 2 + intN(min(len(recs)-1, cfg.maxBatch))
	}
	out := [][]cdcmodel.Record{recs[:first]}
	for recs = recs[first:]; len(recs) > 0; {
		n := min(len(recs), 1+intN(cfg.maxBatch))
		out = append(out, recs[:n])
		recs = recs[n:]
	}
	return out
}

// engineBatch is a batch as the consumer passes it to the Sink: tombstone
// records count in the offsets only, unless pass says otherwise.
func engineBatch(recs []cdcmodel.Record, passTombstones bool) merge.Batch {
	b := merge.Batch{LastOffsets: map[cdctable.TopicPartition]int64{}}
	for _, r := range recs {
		tp := cdctable.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		b.LastOffsets[tp] = max(b.LastOffsets[tp], r.Offset)
		if r.Change.Op != codecs.OpTombstone || passTombstones {
			b.Records = append(b.Records, merge.Record{TopicPartition: tp, Offset: r.Offset, Change: r.Change})
		}
	}
	return b
}

func upTo(recs []cdcmodel.Record) map[cdcmodel.TopicPartition]int64 {
	out := map[cdcmodel.TopicPartition]int64{}
	for _, r := range recs {
		out[r.TopicPartition] = max(out[r.TopicPartition], r.Offset)
	}
	return out
}
