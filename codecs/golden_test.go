package codecs

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

var update = flag.Bool("update", false, "rewrite testdata/debezium/*.bin from the brief's example events")

// The golden events are the Debezium brief's worked example (§9): its key
// and value schemas verbatim, and its four events encoded once into .bin
// files. The expected changes in *.want.json are written by hand.
const (
	goldenKeyID   = 1
	goldenValueID = 2
)

func goldenRow(status string, amount []byte, updated int64) map[string]any {
	return map[string]any{
		"order_id": int32(1001), "customer_id": "C-42",
		"order_date": union("int", int32(19797)), "status": union("string", status),
		"amount": union("bytes", amount), "updated_at": union("long", updated),
		"Unit_Price": union("bytes", []byte{0x01, 0x86, 0x3c}),
		"created":    union("string", "2024-03-15T10:30:45.1234567+02:00"),
		"flag":       union("boolean", true), "guid": union("string", "6F9619FF-8B86-D011-B42D-00C04FC964FF"),
	}
}

func goldenSource(snapshot string, tsMS int64, change, commit, serial any) map[string]any {
	return map[string]any{
		"version": "3.4.0.Final", "connector": "sqlserver", "name": "shop", "ts_ms": tsMS,
		"snapshot": union("string", snapshot), "db": "sales", "sequence": nil,
		"ts_us": union("long", tsMS*1000), "ts_ns": union("long", tsMS*1000000),
		"schema": "dbo", "table": "orders",
		"change_lsn": union("string", change), "commit_lsn": union("string", commit), "event_serial_no": union("long", serial),
	}
}

func goldenEvents() map[string]map[string]any {
	const value = "shop.sales.dbo.orders.Value"
	created := goldenRow("NEW", []byte{0x30, 0x39}, 1710498645123)
	shipped := goldenRow("SHIPPED", []byte{0x3a, 0x98}, 1710576300000)
	env := func(op string, before, after map[string]any, src map[string]any, ts int64) map[string]any {
		return map[string]any{
			"before": union(value, nilMap(before)), "after": union(value, nilMap(after)), "source": src,
			"transaction": nil, "op": op, "ts_ms": union("long", ts), "ts_us": union("long", ts*1000), "ts_ns": union("long", ts*1000000),
		}
	}
	return map[string]map[string]any{
		"read":   env("r", nil, created, goldenSource("true", 1710493200000, nil, "0000002b:00000d98:0002", nil), 1710493201456),
		"create": env("c", nil, created, goldenSource("false", 1710498645130, "0000002b:00000e10:0003", "0000002b:00000e10:0005", int64(1)), 1710498650002),
		"update": env("u", created, shipped, goldenSource("false", 1710576300007, "0000002c:000001a0:0002", "0000002c:000001a0:0004", int64(2)), 1710576304118),
		"delete": env("d", shipped, nil, goldenSource("false", 1710580000003, "0000002c:00000230:0002", "0000002c:00000230:0005", int64(1)), 1710580003771),
	}
}

// renderChange is the JSON shape of the *.want.json files.
func renderChange(ch Change) map[string]any {
	render := func(l *Layout, vals []any) map[string]any {
		m := map[string]any{}
		for i, v := range vals {
			switch x := v.(type) {
			case decimal128.Num:
				v = x.String(l.Columns[i].Type.Scale)
			case []byte:
				v = hex.EncodeToString(x)
			}
			m[l.Columns[i].Name] = v
		}
		return m
	}
	out := map[string]any{
		"op": string(rune(ch.Op)), "table": ch.Table.String(), "pos": ch.Pos.String(),
		"commit_ms": ch.CommitMillis, "snapshot": ch.Snapshot, "key": render(ch.KeyLayout, ch.Key),
	}
	if ch.Row != nil {
		out["row"] = render(ch.Layout, ch.Row)
	}
	return out
}

func TestGoldenBriefExample(t *testing.T) {
	dir := filepath.Join("testdata", "debezium")
	keyS, err := os.ReadFile(filepath.Join(dir, "orders.key.avsc"))
	require.NoError(t, err)
	valueS, err := os.ReadFile(filepath.Join(dir, "orders.value.avsc"))
	require.NoError(t, err)
	src := newMapSource()
	src.add(goldenKeyID, string(keyS))
	src.add(goldenValueID, string(valueS))
	d, err := NewDecoder(src, Options{})
	require.NoError(t, err)

	for name, datum := range goldenEvents() {
		t.Run(name, func(t *testing.T) {
			keyPath, valuePath := filepath.Join(dir, name+".key.bin"), filepath.Join(dir, name+".value.bin")
			if *update {
				require.NoError(t, os.WriteFile(keyPath, encode(t, goldenKeyID, string(keyS), map[string]any{"order_id": int32(1001)}), 0o644))
				require.NoError(t, os.WriteFile(valuePath, encode(t, goldenValueID, string(valueS), datum), 0o644))
			}
			key, err := os.ReadFile(keyPath)
			require.NoError(t, err)
			value, err := os.ReadFile(valuePath)
			require.NoError(t, err)
			ch, err := d.Decode(t.Context(), key, value)
			require.NoError(t, err)
			got, err := json.MarshalIndent(renderChange(ch), "", "  ")
			require.NoError(t, err)
			want, err := os.ReadFile(filepath.Join(dir, name+".want.json"))
			require.NoError(t, err)
			require.JSONEq(t, string(want), string(got))
		})
	}
}
