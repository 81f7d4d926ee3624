package dbzgen

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linkedin/goavro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// Transaction topic statuses (brief §7).
const (
	TxBegin = "BEGIN"
	TxEnd   = "END"
)

// TxMarker is an event of the transaction topic (<topic.prefix>.transaction,
// provide.transaction.metadata=true): the BEGIN or END of a source
// transaction, whose id is its commit LSN.
type TxMarker struct {
	Status string
	ID     string
	// Counts are the data events per table (END only); every table of the
	// transaction appears with at least one event.
	Counts map[*Table]int64
	// ProcessedAt is ts_ms.
	ProcessedAt time.Time
}

// txTopic holds the transaction topic's schemas, compiled and registered on
// first use.
type txTopic struct {
	mu             sync.Mutex
	keyCodec       *goavro.Codec
	valueCodec     *goavro.Codec
	keyID, valueID int
}

// TransactionTopic is the topic the connector writes TxMarkers to.
func (g *Generator) TransactionTopic() string { return g.opts.Prefix + ".transaction" }

// Topic is the topic ev goes to: its table's, or the transaction topic for a
// marker.
func (g *Generator) Topic(ev Event) string {
	if ev.Marker != nil {
		return g.TransactionTopic()
	}
	return ev.Table.Topic()
}

// txKeySchema is the transaction topic's key schema. Debezium 3.x (checked
// against 3.6.1's own classes, codecs/testdata/debezium/java) gives the key
// and value records connect.version 1 and makes data_collections' items
// optional; the older layouts keep the form documented for them.
func txKeySchema(l Layout) object {
	o := object{}.set("type", "record").set("name", "TransactionMetadataKey").set("namespace", "io.debezium.connector.common").
		set("fields", []any{field("id", "string")})
	if l == Layout31 {
		o = o.set("connect.version", 1)
	}
	return o.set("connect.name", "io.debezium.connector.common.TransactionMetadataKey")
}

func txValueSchema(l Layout) object {
	collection := object{}.set("type", "record").set("name", "collection").set("namespace", "event").
		set("fields", []any{field("data_collection", "string"), field("event_count", "long")}).
		set("connect.version", 1).set("connect.name", "event.collection")
	var items any = collection
	if l == Layout31 {
		items = optional(collection)
	}
	o := object{}.set("type", "record").set("name", "TransactionMetadataValue").set("namespace", "io.debezium.connector.common").
		set("fields", []any{
			field("status", "string"),
			field("id", "string"),
			nullField("event_count", "long"),
			nullField("data_collections", object{}.set("type", "array").set("items", items)),
			field("ts_ms", "long"),
		})
	if l == Layout31 {
		o = o.set("connect.version", 1)
	}
	return o.set("connect.name", "io.debezium.connector.common.TransactionMetadataValue")
}

func (g *Generator) registerTx(ctx context.Context) (*txTopic, error) {
	tx := &g.tx
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.valueID != 0 {
		return tx, nil
	}
	if g.reg == nil {
		return nil, ErrNoRegistry
	}
	keyText, keyCodec, err := compileSchema(txKeySchema(g.opts.Layout))
	if err != nil {
		return nil, err
	}
	valueText, valueCodec, err := compileSchema(txValueSchema(g.opts.Layout))
	if err != nil {
		return nil, err
	}
	topic := g.TransactionTopic()
	if tx.keyID, err = g.reg.RegisterSchema(ctx, topic+"-key", sr.Schema{Schema: keyText}, -1, -1); err != nil {
		return nil, fmt.Errorf("registering %s-key: %w", topic, err)
	}
	if tx.valueID, err = g.reg.RegisterSchema(ctx, topic+"-value", sr.Schema{Schema: valueText}, -1, -1); err != nil {
		return nil, fmt.Errorf("registering %s-value: %w", topic, err)
	}
	tx.keyCodec, tx.valueCodec = keyCodec, valueCodec
	return tx, nil
}

// encodeMarker is Encode for a transaction topic event.
func (g *Generator) encodeMarker(ctx context.Context, m *TxMarker) (key, value []byte, err error) {
	tx, err := g.registerTx(ctx)
	if err != nil {
		return nil, nil, err
	}
	if key, err = tx.keyCodec.BinaryFromNative(wireHeader(tx.keyID), map[string]any{"id": m.ID}); err != nil {
		return nil, nil, fmt.Errorf("encoding transaction key: %w", err)
	}
	native := markerNative(m, g.opts.Layout)
	if value, err = tx.valueCodec.BinaryFromNative(wireHeader(tx.valueID), native); err != nil {
		return nil, nil, fmt.Errorf("encoding transaction %s %s: %w", m.Status, m.ID, err)
	}
	return key, value, nil
}

// markerNative is the goavro form of a transaction topic event.
func markerNative(m *TxMarker, l Layout) map[string]any {
	native := map[string]any{"status": m.Status, "id": m.ID, "event_count": nil, "data_collections": nil,
		"ts_ms": m.ProcessedAt.UnixMilli()}
	if m.Status == TxEnd {
		var total int64
		var cols []any
		// Tables in topic order, so that equal markers encode equally.
		tables := slices.SortedFunc(maps.Keys(m.Counts), func(a, b *Table) int { return strings.Compare(a.topic, b.topic) })
		for _, t := range tables {
			n := m.Counts[t]
			total += n
			d := t.def
			var col any = map[string]any{"data_collection": d.Database + "." + d.Schema + "." + d.Name, "event_count": n}
			if l == Layout31 {
				col = goavro.Union("event.collection", col)
			}
			cols = append(cols, col)
		}
		native["event_count"] = goavro.Union("long", total)
		native["data_collections"] = goavro.Union("array", cols)
	}
	return native
}
