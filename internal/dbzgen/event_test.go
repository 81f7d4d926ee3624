package dbzgen_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

func orderRow(status, amount string) dbzgen.Row {
	return dbzgen.Row{
		"order_id": 1001, "customer_id": "C-42", "order_date": utc(2024, 3, 15, 0, 0, 0, 0),
		"status": status, "amount": amount, "updated_at": utc(2024, 3, 15, 10, 30, 45, 123000000),
		"Unit Price": "9.99", "created": time.Date(2024, 3, 15, 10, 30, 45, 123456700, time.FixedZone("", 7200)),
		"flag": true, "guid": "6F9619FF-8B86-D011-B42D-00C04FC964FF",
	}
}

// The §9.3 events of the brief: r, c, u, d and the tombstone, with the
// source blocks written there.
func TestOrdersEventsMatchBrief(t *testing.T) {
	h := newHarness(t, dbzgen.DefaultOptions())
	orders, err := h.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	lsn := func(s string) dbzgen.LSN {
		l, err := dbzgen.ParseLSN(s)
		require.NoError(t, err)
		return l
	}
	newRow, shipped := orderRow("NEW", "123.45"), orderRow("SHIPPED", "150.00")
	shipped["updated_at"] = utc(2024, 3, 16, 8, 5, 0, 0)

	tests := []struct {
		name       string
		ev         dbzgen.Event
		wantBefore map[string]any
		wantAfter  map[string]any
		wantSource map[string]any
	}{
		{
			name: "snapshot read",
			ev: dbzgen.Event{Op: dbzgen.OpRead, After: newRow, Source: dbzgen.Source{
				Time: time.UnixMilli(1710493200000), Snapshot: "true", CommitLSN: lsn("0000002b:00000d98:0002"),
			}},
			wantAfter:  map[string]any{"status": "NEW", "amount": rat("123.45"), "updated_at": int64(1710498645123), "order_date": int32(19797)},
			wantSource: map[string]any{"snapshot": "true", "change_lsn": nil, "commit_lsn": "0000002b:00000d98:0002", "event_serial_no": nil, "ts_ms": int64(1710493200000)},
		},
		{
			name: "insert",
			ev: dbzgen.Event{Op: dbzgen.OpCreate, After: newRow, Source: dbzgen.Source{
				Time: time.UnixMilli(1710498645130), CommitLSN: lsn("0000002b:00000e10:0005"), ChangeLSN: lsn("0000002b:00000e10:0003"), SerialNo: 1,
			}},
			wantAfter:  map[string]any{"Unit_Price": rat("9.99"), "created": "2024-03-15T10:30:45.1234567+02:00", "guid": "6F9619FF-8B86-D011-B42D-00C04FC964FF"},
			wantSource: map[string]any{"snapshot": "false", "change_lsn": "0000002b:00000e10:0003", "commit_lsn": "0000002b:00000e10:0005", "event_serial_no": int64(1)},
		},
		{
			name: "update",
			ev: dbzgen.Event{Op: dbzgen.OpUpdate, Before: newRow, After: shipped, Source: dbzgen.Source{
				Time: time.UnixMilli(1710576300007), CommitLSN: lsn("0000002c:000001a0:0004"), ChangeLSN: lsn("0000002c:000001a0:0002"), SerialNo: 2,
			}, Transaction: &dbzgen.Transaction{ID: "0000002c:000001a0:0004", TotalOrder: 1, DataCollectionOrder: 1}},
			wantBefore: map[string]any{"status": "NEW"},
			wantAfter:  map[string]any{"status": "SHIPPED", "amount": rat("150"), "updated_at": int64(1710576300000)},
			wantSource: map[string]any{"event_serial_no": int64(2)},
		},
		{
			name: "delete",
			ev: dbzgen.Event{Op: dbzgen.OpDelete, Before: shipped, Source: dbzgen.Source{
				Time: time.UnixMilli(1710580000003), CommitLSN: lsn("0000002c:00000230:0005"), ChangeLSN: lsn("0000002c:00000230:0002"), SerialNo: 1,
			}},
			wantBefore: map[string]any{"status": "SHIPPED"},
			wantSource: map[string]any{"commit_lsn": "0000002c:00000230:0005"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.ev.Table = orders
			key, value, err := h.gen.Encode(t.Context(), tc.ev)
			require.NoError(t, err)
			require.Equal(t, map[string]any{"order_id": int32(1001)}, h.decode(t, key))
			env := h.decode(t, value)
			require.Equal(t, string(tc.ev.Op), env["op"])
			check := func(which string, want map[string]any) {
				got := image(t, env, which)
				if want == nil {
					require.Nil(t, got, which)
					return
				}
				for k, w := range want {
					requireSameValue(t, w, got[k], which+"."+k)
				}
			}
			check("before", tc.wantBefore)
			check("after", tc.wantAfter)
			src := unwrap(env["source"].(map[string]any))
			for k, w := range tc.wantSource {
				require.Equal(t, w, src[k], "source."+k)
			}
			if tc.ev.Transaction != nil {
				require.Equal(t, map[string]any{"event.block": map[string]any{
					"id": "0000002c:000001a0:0004", "total_order": int64(1), "data_collection_order": int64(1),
				}}, env["transaction"])
			} else {
				require.Nil(t, env["transaction"])
			}
		})
	}

	t.Run("tombstone", func(t *testing.T) {
		key, value, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: orders, Op: dbzgen.OpDelete, Before: shipped, Tombstone: true})
		require.NoError(t, err)
		require.Nil(t, value)
		require.Equal(t, map[string]any{"order_id": int32(1001)}, h.decode(t, key))
	})
	t.Run("truncate has no key and no rows", func(t *testing.T) {
		key, value, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: orders, Op: dbzgen.OpTruncate, Source: dbzgen.Source{Time: time.UnixMilli(1), CommitLSN: lsn("0000002d:00000010:0001")}})
		require.NoError(t, err)
		require.Nil(t, key)
		env := h.decode(t, value)
		require.Equal(t, "t", env["op"])
		require.Nil(t, env["before"])
		require.Nil(t, env["after"])
	})
}

func TestSchemaIDsAreRegisteredOnce(t *testing.T) {
	h := newHarness(t, dbzgen.DefaultOptions())
	orders, err := h.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	customers, err := h.gen.Table(dbzgen.Customers())
	require.NoError(t, err)
	k1, v1, err := h.gen.Register(t.Context(), orders)
	require.NoError(t, err)
	k2, v2, err := h.gen.Register(t.Context(), orders)
	require.NoError(t, err)
	require.Equal(t, []int{k1, v1}, []int{k2, v2})
	k3, v3, err := h.gen.Register(t.Context(), customers)
	require.NoError(t, err)
	require.NotContains(t, []int{k1, v1}, k3)
	require.NotContains(t, []int{k1, v1, k3}, v3)

	subjects, err := h.cl.Subjects(t.Context())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{
		"shop.sales.dbo.orders-key", "shop.sales.dbo.orders-value",
		"shop.sales.dbo.customers-key", "shop.sales.dbo.customers-value",
	}, subjects)

	_, value, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: orders, Op: dbzgen.OpCreate, After: orderRow("NEW", "1")})
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0, 0, 0, byte(v1)}, value[:5])
}

func TestIgnoreDefaultForNullablesWritesNullSnapshot(t *testing.T) {
	opts := dbzgen.DefaultOptions()
	opts.IgnoreDefaultForNullables = true
	h := newHarness(t, opts)
	orders, err := h.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	_, value, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: orders, Op: dbzgen.OpCreate, After: orderRow("NEW", "1")})
	require.NoError(t, err)
	src := h.decode(t, value)["source"].(map[string]any)
	require.Nil(t, src["snapshot"])
	require.Contains(t, src, "snapshot")
}

func TestKeylessTableHasNullKey(t *testing.T) {
	h := newHarness(t, dbzgen.DefaultOptions())
	def := dbzgen.TableDef{Database: "sales", Schema: "dbo", Name: "log", Columns: []dbzgen.Column{{Name: "msg", Type: "nvarchar(max)", Nullable: true}}}
	tab, err := h.gen.Table(def)
	require.NoError(t, err)
	require.Empty(t, tab.KeySchema())
	key, value, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: tab, Op: dbzgen.OpCreate, After: dbzgen.Row{"msg": "hi"}})
	require.NoError(t, err)
	require.Nil(t, key)
	require.Equal(t, "hi", image(t, h.decode(t, value), "after")["msg"])
}

func TestBadEvents(t *testing.T) {
	h := newHarness(t, dbzgen.DefaultOptions())
	orders, err := h.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	row := orderRow("NEW", "1")
	tests := []struct {
		name string
		ev   dbzgen.Event
	}{
		{"no table", dbzgen.Event{Op: dbzgen.OpCreate, After: row}},
		{"create with before", dbzgen.Event{Table: orders, Op: dbzgen.OpCreate, Before: row, After: row}},
		{"update without before", dbzgen.Event{Table: orders, Op: dbzgen.OpUpdate, After: row}},
		{"delete with after", dbzgen.Event{Table: orders, Op: dbzgen.OpDelete, Before: row, After: row}},
		{"truncate with rows", dbzgen.Event{Table: orders, Op: dbzgen.OpTruncate, After: row}},
		{"unknown op", dbzgen.Event{Table: orders, Op: 'x', After: row}},
		{"no image for the key", dbzgen.Event{Table: orders, Op: dbzgen.OpCreate}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := h.gen.Encode(t.Context(), tc.ev)
			require.ErrorIs(t, err, dbzgen.ErrBadEvent)
		})
	}
}

func TestLSN(t *testing.T) {
	l := dbzgen.MakeLSN(0x2a, 0xb38, 3)
	require.Equal(t, "0000002a:00000b38:0003", l.String())
	p, err := dbzgen.ParseLSN("0000002a:00000b38:0003")
	require.NoError(t, err)
	require.Equal(t, l, p)
	vlf, block, slot := p.Parts()
	require.Equal(t, []uint64{0x2a, 0xb38, 3}, []uint64{uint64(vlf), uint64(block), uint64(slot)})
	require.True(t, dbzgen.LSN{}.IsZero())
	require.False(t, l.IsZero())
	for _, bad := range []string{"", "0000002a:00000b38", "0000002a:00000b38:003", "0000002g:00000b38:0003", "0000002a-00000b38-0003"} {
		_, err := dbzgen.ParseLSN(bad)
		require.Error(t, err, bad)
	}
}

func FuzzParseLSN(f *testing.F) {
	for _, s := range []string{"0000002a:00000b38:0003", "ffffffff:ffffffff:ffff", "", "::", "0000002A:00000B38:0003"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := dbzgen.ParseLSN(s)
		if err != nil {
			return
		}
		// What parses re-renders to the same text, modulo hex case.
		back, err := dbzgen.ParseLSN(l.String())
		require.NoError(t, err)
		require.Equal(t, l, back)
		require.Len(t, l.String(), 22)
	})
}

// Encode is safe for concurrent use; the first uses race to register and all
// must agree on the ids.
func TestConcurrentEncode(t *testing.T) {
	h := newHarness(t, dbzgen.DefaultOptions())
	orders, err := h.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	const workers, each = 4, 25
	out := make(chan []byte, workers*each)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				row := orderRow("NEW", "1")
				row["order_id"] = w*each + i
				_, value, err := h.gen.Encode(t.Context(), dbzgen.Event{Table: orders, Op: dbzgen.OpCreate, After: row})
				if err != nil {
					errs <- err
					return
				}
				out <- value
			}
		})
	}
	wg.Wait()
	close(out)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	seen := map[int32]bool{}
	var header []byte
	for v := range out {
		if header == nil {
			header = v[:5]
		}
		require.Equal(t, header, v[:5], "one schema id")
		seen[image(t, h.decode(t, v), "after")["order_id"].(int32)] = true
	}
	require.Len(t, seen, workers*each)
}
