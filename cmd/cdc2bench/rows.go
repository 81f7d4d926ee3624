package main

import (
	"encoding/binary"
	"fmt"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
	"github.com/cdc2delta/cdc2delta/processor/merge"
)

// The benchmark table: the source layout cdc2delta's Sink creates it from.
var (
	benchTable = codecs.TableID{Database: "bench", Schema: "dbo", Table: "orders"}
	benchTP    = cdctable.TopicPartition{Topic: "bench.bench.dbo.orders", Partition: 0}
	benchValue = &codecs.Layout{SchemaID: 1, Name: "bench.bench.dbo.orders.Value", Columns: []codecs.Column{
		{Name: "id", Type: codecs.Type{Kind: codecs.KindLong}, SourceType: "BIGINT"},
		{Name: "customer_id", Type: codecs.Type{Kind: codecs.KindLong}, Nullable: true, SourceType: "BIGINT"},
		{Name: "status", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true, SourceType: "NVARCHAR(20)"},
		{Name: "amount", Type: codecs.Type{Kind: codecs.KindDouble}, Nullable: true, SourceType: "FLOAT"},
		{Name: "quantity", Type: codecs.Type{Kind: codecs.KindInteger}, Nullable: true, SourceType: "INT"},
		{Name: "note", Type: codecs.Type{Kind: codecs.KindString}, Nullable: true, SourceType: "NVARCHAR(100)"},
		{Name: "updated_at", Type: codecs.Type{Kind: codecs.KindTimestamp}, Nullable: true, SourceType: "DATETIMEOFFSET(6)"},
	}}
	benchKey = &codecs.Layout{SchemaID: 2, Name: "bench.bench.dbo.orders.Key", Columns: []codecs.Column{
		{Name: "id", Type: codecs.Type{Kind: codecs.KindLong}},
	}}
	benchKeyIndex = []int{0}
)

// positionOf is the source position of sequence number seq: the commit and
// change LSNs both count events, so positions order as sequence numbers.
func positionOf(seq int64) codecs.Position {
	var l codecs.LSN
	binary.BigEndian.PutUint64(l[2:], uint64(seq))
	return codecs.Position{Commit: l, Change: l, Serial: 1}
}

// seqOf inverts positionOf on its hex rendering.
func seqOf(hexPos string) (int64, error) {
	p, err := codecs.PositionFromHex(hexPos)
	if err != nil {
		return 0, err
	}
	seq := int64(binary.BigEndian.Uint64(p.Commit[2:]))
	if positionOf(seq).Hex() != hexPos {
		return 0, fmt.Errorf("position %s was not made by cdc2bench", hexPos)
	}
	return seq, nil
}

// record converts a change into what the Kafka consumer would hand the
// Sink; the offset is the sequence number so every batch is new.
func (c change) record() merge.Record {
	ch := codecs.Change{
		Op: codecs.Op(c.Op), Table: benchTable, Pos: positionOf(c.Seq), CommitMillis: commitMillis(c.Seq),
		Layout: benchValue, KeyLayout: benchKey, KeyIndex: benchKeyIndex, Key: []any{c.ID},
	}
	if c.Op == 'd' {
		ch.Row = []any{c.ID, nil, nil, nil, nil, nil, nil}
	} else {
		r := c.Row
		ch.Row = []any{c.ID, r.CustomerID, r.Status, r.Amount, r.Quantity, r.Note, r.UpdatedAt}
	}
	return merge.Record{TopicPartition: benchTP, Offset: c.Seq, Change: ch}
}

// processorBatch wraps changes as one Sink batch.
func processorBatch(cs []change) merge.Batch {
	b := merge.Batch{Records: make([]merge.Record, len(cs)), LastOffsets: map[cdctable.TopicPartition]int64{}}
	for i, c := range cs {
		b.Records[i] = c.record()
		b.LastOffsets[benchTP] = max(b.LastOffsets[benchTP], c.Seq)
	}
	return b
}
