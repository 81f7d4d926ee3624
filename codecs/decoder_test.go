package codecs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

// ordersCols is the brief's worked example table (§9), Debezium 3.x,
// field.name.adjustment.mode=avro, "Unit Price" propagated.
func ordersCols() []tcol {
	return []tcol{
		{name: "order_id", typ: "int"},
		{name: "customer_id", typ: propagated("string", "NVARCHAR", "20", "")},
		{name: "order_date", typ: dbzType("int", nameDate), nullable: true},
		{name: "status", typ: "string", nullable: true},
		{name: "amount", typ: propagated(decType(10, 2), "DECIMAL", "10", "2"), nullable: true},
		{name: "updated_at", typ: dbzType("long", nameTimestamp), nullable: true},
		{name: "Unit_Price", typ: withParam(propagated(decType(19, 4), "MONEY", "19", "4"), "__debezium.source.column.name", "Unit Price"), nullable: true},
		{name: "created", typ: dbzType("string", nameZonedTs), nullable: true},
		{name: "flag", typ: "boolean", nullable: true},
		{name: "guid", typ: "string", nullable: true},
		{name: "notes", typ: withParam(propagated("string", "NVARCHAR", "2147483647", ""), "__debezium.source.column.comment", "free text"), nullable: true},
	}
}

func withParam(typ map[string]any, k, v string) map[string]any {
	typ["connect.parameters"].(map[string]any)[k] = v
	return typ
}

func ordersRow(status string, amount []byte, updated int64) map[string]any {
	return map[string]any{
		"order_id":    int32(1001),
		"customer_id": "C-42",
		"order_date":  union("int", int32(19797)),
		"status":      union("string", status),
		"amount":      union("bytes", amount),
		"updated_at":  union("long", updated),
		"Unit_Price":  union("bytes", []byte{0x01, 0x86, 0x3c}),
		"created":     union("string", "2024-03-15T10:30:45.1234567+02:00"),
		"flag":        union("boolean", true),
		"guid":        union("string", "6F9619FF-8B86-D011-B42D-00C04FC964FF"),
		"notes":       union("string", DefaultPlaceholder),
	}
}

type fixture struct {
	src      *mapSource
	dec      *Decoder
	key      []byte
	keyS     string
	envS     string
	version  layoutVersion
	keyID    int
	valueID  int
	cols     []tcol
	keyValue map[string]any
}

func newFixture(t testing.TB, v layoutVersion, opts Options) *fixture {
	t.Helper()
	f := &fixture{src: newMapSource(), version: v, keyID: 7, valueID: 8, cols: ordersCols()}
	f.keyS = keySchema(f.cols[:1])
	f.envS = envelopeSchema(v, f.cols)
	f.src.add(f.keyID, f.keyS)
	f.src.add(f.valueID, f.envS)
	f.keyValue = map[string]any{"order_id": int32(1001)}
	f.key = encode(t, f.keyID, f.keyS, f.keyValue)
	var err error
	f.dec, err = NewDecoder(f.src, opts)
	require.NoError(t, err)
	return f
}

func (f *fixture) value(t testing.TB, op string, before, after map[string]any, src srcBlock, tx string) []byte {
	return encode(t, f.valueID, f.envS, envelope(f.version, op, before, after, src, tx))
}

func TestDecodeEnvelope(t *testing.T) {
	streaming := srcBlock{snapshot: "false", commit: "0000002b:00000e10:0005", change: "0000002b:00000e10:0003", serial: int64(1), tsMS: 1710498645130}
	snapshot := srcBlock{snapshot: "first", commit: "0000002b:00000d98:0002", tsMS: 1710493200000}
	update := srcBlock{snapshot: "false", commit: "0000002c:000001a0:0004", change: "0000002c:000001a0:0002", serial: int64(2), tsMS: 1710576300007}
	oldRow := ordersRow("NEW", []byte{0x30, 0x39}, 1710498645123)
	newRow := ordersRow("SHIPPED", []byte{0x3a, 0x98}, 1710576300000)

	tests := []struct {
		name         string
		op           string
		before       map[string]any
		after        map[string]any
		src          srcBlock
		tx           string
		wantOp       Op
		wantPos      Position
		wantSnapshot string
		wantStatus   any // Row[3]
		wantRow      bool
	}{
		{name: "create", op: "c", after: oldRow, src: streaming, wantOp: OpCreate, wantStatus: "NEW", wantRow: true,
			wantPos: Position{Commit: LSN{0, 0, 0, 0x2b, 0, 0, 0x0e, 0x10, 0, 5}, Change: LSN{0, 0, 0, 0x2b, 0, 0, 0x0e, 0x10, 0, 3}, Serial: 1}},
		{name: "snapshot read", op: "r", after: oldRow, src: snapshot, wantOp: OpRead, wantStatus: "NEW", wantRow: true, wantSnapshot: "first",
			wantPos: Position{Commit: LSN{0, 0, 0, 0x2b, 0, 0, 0x0d, 0x98, 0, 2}}},
		{name: "update takes after", op: "u", before: oldRow, after: newRow, src: update, tx: "0000002c:000001a0:0004", wantOp: OpUpdate, wantStatus: "SHIPPED", wantRow: true,
			wantPos: Position{Commit: LSN{0, 0, 0, 0x2c, 0, 0, 1, 0xa0, 0, 4}, Change: LSN{0, 0, 0, 0x2c, 0, 0, 1, 0xa0, 0, 2}, Serial: 2}},
		{name: "delete takes before", op: "d", before: newRow, src: update, wantOp: OpDelete, wantStatus: "SHIPPED", wantRow: true,
			wantPos: Position{Commit: LSN{0, 0, 0, 0x2c, 0, 0, 1, 0xa0, 0, 4}, Change: LSN{0, 0, 0, 0x2c, 0, 0, 1, 0xa0, 0, 2}, Serial: 2}},
		{name: "truncate", op: "t", src: streaming, wantOp: OpTruncate,
			wantPos: Position{Commit: LSN{0, 0, 0, 0x2b, 0, 0, 0x0e, 0x10, 0, 5}, Change: LSN{0, 0, 0, 0x2b, 0, 0, 0x0e, 0x10, 0, 3}, Serial: 1}},
		{name: "null snapshot marker", op: "c", after: oldRow, src: srcBlock{commit: "0000002b:00000e10:0005"}, wantOp: OpCreate, wantStatus: "NEW", wantRow: true,
			wantPos: Position{Commit: LSN{0, 0, 0, 0x2b, 0, 0, 0x0e, 0x10, 0, 5}}},
	}
	for _, v := range []layoutVersion{layoutV2, layoutV3} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				f := newFixture(t, v, Options{})
				ch, err := f.dec.Decode(t.Context(), f.key, f.value(t, tc.op, tc.before, tc.after, tc.src, tc.tx))
				require.NoError(t, err)
				require.Equal(t, tc.wantOp, ch.Op)
				require.Equal(t, tc.wantPos, ch.Pos)
				require.Equal(t, tc.wantSnapshot, ch.Snapshot)
				require.Equal(t, tc.tx, ch.TxID)
				require.Equal(t, tc.src.tsMS, ch.CommitMillis)
				require.Equal(t, TableID{Database: "sales", Schema: "dbo", Table: "orders"}, ch.Table)
				if !tc.wantRow {
					require.Nil(t, ch.Row)
					return
				}
				require.Equal(t, []any{int32(1001)}, ch.Key)
				require.Equal(t, []int{0}, ch.KeyIndex)
				require.Equal(t, tc.wantStatus, ch.Row[3])
				require.Equal(t, "C-42", ch.Row[1])
				require.Equal(t, decimal128.FromInt64(99900), ch.Row[6])
				require.Equal(t, int64(1710491445123456), ch.Row[7])
				require.Equal(t, []int{10}, ch.Unavailable, "notes carried the placeholder")
			})
		}
	}
}

func TestLayoutNamesAndComments(t *testing.T) {
	f := newFixture(t, layoutV3, Options{})
	l, err := f.dec.Layout(t.Context(), f.valueID)
	require.NoError(t, err)
	require.Equal(t, testNS+".Value", l.Name)
	require.Equal(t, f.valueID, l.SchemaID)
	price := l.Columns[6]
	require.Equal(t, "Unit Price", price.Name)
	require.Equal(t, "Unit_Price", price.AvroName)
	require.Equal(t, "MONEY", price.Comment)
	require.Equal(t, DecimalType(19, 4), price.Type)
	require.Equal(t, "decimal(19,4)", price.Type.DeltaName())
	require.Equal(t, 6, l.Index("Unit Price"))
	require.Equal(t, "NVARCHAR(20)", l.Columns[1].Comment)
	require.Equal(t, "DECIMAL(10,2)", l.Columns[4].Comment)
	require.Equal(t, "free text (NVARCHAR(max))", l.Columns[10].Comment)
	require.Empty(t, l.Columns[3].Comment, "no propagated type, no comment")
	require.False(t, l.Columns[0].Nullable)
	require.True(t, l.Columns[2].Nullable)
	wantDelta := []string{"integer", "string", "date", "string", "decimal(10,2)", "timestamp_ntz", "decimal(19,4)", "timestamp", "boolean", "string", "string"}
	for i, c := range l.Columns {
		require.Equal(t, wantDelta[i], c.Type.DeltaName(), c.Name)
	}
}

func TestDecodeTombstone(t *testing.T) {
	f := newFixture(t, layoutV3, Options{})
	ch, err := f.dec.Decode(t.Context(), f.key, nil)
	require.NoError(t, err)
	require.Equal(t, OpTombstone, ch.Op)
	require.Equal(t, []any{int32(1001)}, ch.Key)
	require.Nil(t, ch.Row)

	ch, err = f.dec.Decode(t.Context(), nil, []byte{})
	require.NoError(t, err, "a keyless tombstone is still a tombstone")
	require.Equal(t, OpTombstone, ch.Op)
	require.Nil(t, ch.Key)
}

func TestDecodeErrors(t *testing.T) {
	f := newFixture(t, layoutV3, Options{})
	row := ordersRow("NEW", []byte{1}, 1)
	good := srcBlock{commit: "0000002b:00000e10:0005", change: "0000002b:00000e10:0003", serial: int64(1)}
	valid := f.value(t, "c", nil, row, good, "")
	f.src.add(99, keySchema(f.cols[:1]))

	tests := []struct {
		name       string
		key, value []byte
		wantErr    error
		wantID     int
	}{
		{name: "magic byte", key: f.key, value: append([]byte{1}, valid[1:]...), wantErr: ErrBadHeader, wantID: -1},
		{name: "short value", key: f.key, value: []byte{0, 0, 0}, wantErr: ErrBadHeader, wantID: -1},
		{name: "short key", key: []byte{0}, value: valid, wantErr: ErrBadHeader, wantID: -1},
		{name: "unknown value schema", key: f.key, value: append(AppendHeader(nil, 4242), valid[5:]...), wantErr: ErrUnknownSchema, wantID: 4242},
		{name: "value schema is a key schema", key: f.key, value: append(AppendHeader(nil, 99), valid[5:]...), wantErr: ErrUnsupportedSchema, wantID: 99},
		{name: "key schema is an envelope", key: valid, value: valid, wantErr: ErrUnsupportedSchema, wantID: f.valueID},
		{name: "trailing bytes", key: f.key, value: append(append([]byte{}, valid...), 0), wantErr: ErrBadBody, wantID: f.valueID},
		{name: "truncated body", key: f.key, value: valid[:len(valid)-3], wantErr: ErrBadBody, wantID: f.valueID},
		{name: "unknown op", key: f.key, value: f.value(t, "x", nil, row, good, ""), wantErr: ErrUnknownOp, wantID: f.valueID},
		{name: "empty op", key: f.key, value: f.value(t, "", nil, row, good, ""), wantErr: ErrUnknownOp, wantID: f.valueID},
		{name: "create without after", key: f.key, value: f.value(t, "c", row, nil, good, ""), wantErr: ErrBadEnvelope, wantID: f.valueID},
		{name: "delete without before", key: f.key, value: f.value(t, "d", nil, row, good, ""), wantErr: ErrBadEnvelope, wantID: f.valueID},
		{name: "malformed lsn", key: f.key, value: f.value(t, "c", nil, row, srcBlock{commit: "2b:e10:5"}, ""), wantErr: ErrBadEnvelope, wantID: f.valueID},
		{name: "negative serial", key: f.key, value: f.value(t, "c", nil, row, srcBlock{serial: int64(-1)}, ""), wantErr: ErrBadEnvelope, wantID: f.valueID},
		{name: "null key without policy", key: nil, value: valid, wantErr: ErrMissingKey, wantID: f.valueID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.dec.Decode(t.Context(), tc.key, tc.value)
			require.ErrorIs(t, err, tc.wantErr)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			require.Equal(t, tc.wantID, de.SchemaID)
		})
	}
	_, err := f.dec.DecodeRecord(t.Context(), "shop.sales.dbo.orders", 3, 1234, f.key, []byte{1})
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.Equal(t, DecodeError{Topic: "shop.sales.dbo.orders", Partition: 3, Offset: 1234, SchemaID: -1, Err: de.Err}, *de)
	require.Contains(t, err.Error(), "shop.sales.dbo.orders[3]@1234")

	var oe *OpError
	_, err = f.dec.Decode(t.Context(), f.key, f.value(t, "m", nil, row, good, ""))
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "m", oe.Op)
}

func TestNullKeyPolicy(t *testing.T) {
	row := ordersRow("NEW", []byte{1}, 1)
	src := srcBlock{commit: "0000002b:00000e10:0005"}
	tests := []struct {
		name    string
		keys    map[string][]string
		wantKey []any
		wantIdx []int
		wantErr error
	}{
		{name: "schema.table", keys: map[string][]string{"dbo.orders": {"customer_id", "Unit Price"}},
			wantKey: []any{"C-42", decimal128.FromInt64(99900)}, wantIdx: []int{1, 6}},
		{name: "db.schema.table", keys: map[string][]string{"sales.dbo.orders": {"order_id"}}, wantKey: []any{int32(1001)}, wantIdx: []int{0}},
		{name: "other table configured", keys: map[string][]string{"dbo.items": {"id"}}, wantErr: ErrMissingKey},
		{name: "configured column missing", keys: map[string][]string{"dbo.orders": {"nope"}}, wantErr: ErrMissingKey},
		{name: "configured column unavailable", keys: map[string][]string{"dbo.orders": {"notes"}}, wantErr: ErrMissingKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, layoutV3, Options{KeyColumns: tc.keys})
			ch, err := f.dec.Decode(t.Context(), nil, f.value(t, "c", nil, row, src, ""))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantKey, ch.Key)
			require.Equal(t, tc.wantIdx, ch.KeyIndex)
			require.Len(t, ch.KeyLayout.Columns, len(tc.wantKey))
		})
	}
}

func TestCompositeKeyOrder(t *testing.T) {
	// The key lists columns in PK order, which differs from row order, and
	// a nullable key column arrives as ["null",T].
	cols := []tcol{{name: "a", typ: "int"}, {name: "b", typ: "string", nullable: true}, {name: "c", typ: "long"}}
	keyCols := []tcol{cols[2], cols[1]}
	src := newMapSource()
	env := envelopeSchema(layoutV3, cols)
	src.add(1, keySchema(keyCols))
	src.add(2, env)
	d, err := NewDecoder(src, Options{})
	require.NoError(t, err)
	key := encode(t, 1, keySchema(keyCols), map[string]any{"c": int64(9), "b": union("string", "x")})
	row := map[string]any{"a": int32(1), "b": union("string", "x"), "c": int64(9)}
	ch, err := d.Decode(t.Context(), key, encode(t, 2, env, envelope(layoutV3, "c", nil, row, srcBlock{}, "")))
	require.NoError(t, err)
	require.Equal(t, []any{int64(9), "x"}, ch.Key)
	require.Equal(t, []int{2, 1}, ch.KeyIndex)
	require.Equal(t, []string{"c", "b"}, ch.KeyLayout.Names())

	nullKey := encode(t, 1, keySchema(keyCols), map[string]any{"c": int64(9), "b": nil})
	_, err = d.Decode(t.Context(), nullKey, encode(t, 2, env, envelope(layoutV3, "c", nil, row, srcBlock{}, "")))
	require.ErrorIs(t, err, ErrMissingKey)
}

// gatedSource blocks every lookup until released, counting calls.
type gatedSource struct {
	*mapSource
	gate chan struct{}
}

func (g *gatedSource) SchemaByID(ctx context.Context, id int) (string, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return g.mapSource.SchemaByID(ctx, id)
}

func TestSchemaCacheCollapsesConcurrentLookups(t *testing.T) {
	// In a bubble, synctest.Wait returns once every goroutine is blocked: on the gate, or
	// on the lookup another goroutine leads.
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, layoutV3, Options{})
		gs := &gatedSource{mapSource: f.src, gate: make(chan struct{})}
		d, err := NewDecoder(gs, Options{})
		require.NoError(t, err)
		value := f.value(t, "c", nil, ordersRow("NEW", []byte{1}, 1), srcBlock{}, "")

		const n = 32
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				_, err := d.Decode(t.Context(), f.key, value)
				errs <- err
			})
		}
		synctest.Wait() // the goroutines have piled up on the gate
		require.Zero(t, gs.calls.Load(), "no lookup has passed the gate")
		close(gs.gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, int64(2), gs.calls.Load(), "one lookup per id (key and value) for all goroutines")

		_, err = d.Decode(t.Context(), f.key, value)
		require.NoError(t, err)
		require.Equal(t, int64(2), gs.calls.Load(), "cached")
	})
}

func TestSchemaLookupHonoursContext(t *testing.T) {
	f := newFixture(t, layoutV3, Options{})
	gs := &gatedSource{mapSource: f.src, gate: make(chan struct{})}
	d, err := NewDecoder(gs, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err = d.Decode(ctx, f.key, f.value(t, "c", nil, ordersRow("NEW", []byte{1}, 1), srcBlock{}, ""))
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrRegistry) || errors.Is(err, context.DeadlineExceeded), err.Error())

	// The failure is not cached: once the registry answers, decoding works.
	close(gs.gate)
	_, err = d.Decode(t.Context(), f.key, f.value(t, "c", nil, ordersRow("NEW", []byte{1}, 1), srcBlock{}, ""))
	require.NoError(t, err)
}
