package dbzgen_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
)

// position orders events as the brief §2.4 does: commit, change, serial.
func position(ev dbzgen.Event) [3][]byte {
	return [3][]byte{ev.Source.CommitLSN[:], ev.Source.ChangeLSN[:], fmt.Appendf(nil, "%020d", ev.Source.SerialNo)}
}

func comparePos(a, b [3][]byte) int {
	for i := range a {
		if c := bytes.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func keyOf(ev dbzgen.Event, key string) string {
	img := ev.After
	if img == nil {
		img = ev.Before
	}
	return fmt.Sprint(img[key])
}

func TestWorkloadIsDeterministic(t *testing.T) {
	gen := dbzgen.New(nil, dbzgen.DefaultOptions())
	orders, err := gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	opts := dbzgen.WorkloadOptions{Seed: 7, Keys: 20, Snapshot: true, MaxTxEvents: 3, Redeliver: 0.1}
	a, err := dbzgen.NewWorkload(opts, orders)
	require.NoError(t, err)
	b, err := dbzgen.NewWorkload(opts, orders)
	require.NoError(t, err)
	for range 300 {
		require.Equal(t, a.Next(), b.Next())
	}
	opts.Seed = 8
	c, err := dbzgen.NewWorkload(opts, orders)
	require.NoError(t, err)
	differs := false
	for range 300 {
		if !assertEqualEvents(a.Next(), c.Next()) {
			differs = true
		}
	}
	require.True(t, differs, "another seed gives another sequence")
}

func assertEqualEvents(x, y dbzgen.Event) bool { return fmt.Sprint(x) == fmt.Sprint(y) }

// A sink that applies each event only when it is newer than what it holds
// for the key must end with exactly the workload's source rows, with or
// without re-deliveries; and fresh events come in increasing positions.
func TestWorkloadConvergesAndIsOrdered(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts dbzgen.WorkloadOptions
	}{
		{"streaming", dbzgen.WorkloadOptions{Seed: 1, Keys: 30}},
		{"snapshot and transactions", dbzgen.WorkloadOptions{Seed: 2, Keys: 30, Snapshot: true, MaxTxEvents: 4, TransactionMetadata: true}},
		{"redeliveries", dbzgen.WorkloadOptions{Seed: 3, Keys: 10, MaxTxEvents: 2, Redeliver: 0.3, DeleteRatio: 0.3}},
		{"key changes", dbzgen.WorkloadOptions{Seed: 6, Keys: 20, MaxTxEvents: 3, KeyChangeRatio: 0.2}},
		{"key updates", dbzgen.WorkloadOptions{Seed: 7, Keys: 20, MaxTxEvents: 3, KeyUpdateRatio: 0.2, KeyChangeRatio: 0.1}},
		{"late updates", dbzgen.WorkloadOptions{Seed: 8, Keys: 20, MaxTxEvents: 3, LateUpdate: 0.5, DeleteRatio: 0.3, Redeliver: 0.05}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen := dbzgen.New(nil, dbzgen.DefaultOptions())
			orders, err := gen.Table(dbzgen.Orders())
			require.NoError(t, err)
			w, err := dbzgen.NewWorkload(tc.opts, orders)
			require.NoError(t, err)

			type stored struct {
				pos [3][]byte
				row dbzgen.Row // nil once deleted
			}
			sink := map[string]stored{}
			var last [3][]byte
			lates := 0
			seen := map[string]bool{}
			for range 2000 {
				ev := w.Next()
				k := keyOf(ev, "order_id")
				p := position(ev)
				id := fmt.Sprint(p, k, ev.Tombstone)
				fresh := !seen[id]
				seen[id] = true
				switch {
				case fresh && !ev.Tombstone && comparePos(p, last) < 0:
					// Only a late update goes back: its key's delete, at a
					// later position, went out before it.
					require.Equal(t, dbzgen.OpUpdate, ev.Op, "positions never go back")
					require.Positive(t, tc.opts.LateUpdate)
					cur, ok := sink[k]
					require.True(t, ok)
					require.Nil(t, cur.row, "a late update follows its key's delete")
					require.Equal(t, 1, comparePos(cur.pos, p))
					lates++
				case fresh && !ev.Tombstone:
					if last[0] != nil && ev.Op != dbzgen.OpRead && ev.OldKey == nil {
						require.Equal(t, 1, comparePos(p, last), "streaming positions strictly increase")
					}
					last = p
				}
				switch ev.Op {
				case dbzgen.OpRead:
					require.True(t, ev.Source.ChangeLSN.IsZero())
					require.Zero(t, ev.Source.SerialNo)
					require.NotEmpty(t, ev.Source.Snapshot)
				case dbzgen.OpUpdate:
					require.Equal(t, int64(2), ev.Source.SerialNo)
				case dbzgen.OpCreate:
					// 2 when it is the insert half of a key change.
					require.Contains(t, []int64{1, 2}, ev.Source.SerialNo)
				case dbzgen.OpDelete:
					if ev.NewKey != nil {
						require.Equal(t, int64(2), ev.Source.SerialNo, "the delete half of a key update")
					} else {
						require.Equal(t, int64(1), ev.Source.SerialNo)
					}
				}
				if ev.Tombstone {
					continue
				}
				if cur, ok := sink[k]; ok && comparePos(p, cur.pos) <= 0 {
					continue // stale or duplicate
				}
				row := ev.After
				if ev.Op == dbzgen.OpDelete {
					row = nil
				}
				sink[k] = stored{pos: p, row: row}
			}
			var got []dbzgen.Row
			for _, s := range sink {
				if s.row != nil {
					got = append(got, s.row)
				}
			}
			want := w.Rows(orders)
			require.ElementsMatch(t, want, got)
			counts := w.Counts()
			require.Positive(t, counts.Updates)
			require.Positive(t, counts.Deletes)
			if tc.opts.Snapshot {
				require.Equal(t, tc.opts.Keys, counts.Reads)
			}
			if tc.opts.KeyChangeRatio > 0 || tc.opts.KeyUpdateRatio > 0 {
				require.Positive(t, counts.KeyChanges)
			}
			if tc.opts.KeyUpdateRatio > 0 {
				require.Positive(t, counts.KeyUpdates)
				require.Less(t, counts.KeyUpdates, counts.KeyChanges, "both forms")
			} else {
				require.Zero(t, counts.KeyUpdates)
			}
			require.Equal(t, lates, counts.LateUpdates)
			if tc.opts.LateUpdate > 0 {
				require.Positive(t, lates)
			}
			if tc.opts.Redeliver > 0 {
				require.Positive(t, counts.Redeliveries)
			} else {
				// The last delete's tombstone may still be queued.
				require.LessOrEqual(t, counts.Deletes-counts.Tombstones, 1)
				require.GreaterOrEqual(t, counts.Deletes, counts.Tombstones)
			}
		})
	}
}

// A key update goes out as Debezium's relational emitter sends it: the
// delete of the old key naming the new one, its tombstone with the same
// header, then the create of the new key naming the old one, all three
// with one source block; the transaction block counts the delete and the
// create.
func TestWorkloadKeyUpdates(t *testing.T) {
	gen := dbzgen.New(nil, dbzgen.DefaultOptions())
	orders, err := gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 9, Keys: 10, KeyUpdateRatio: 0.3, MaxTxEvents: 3, TransactionMetadata: true}, orders)
	require.NoError(t, err)
	var evs []dbzgen.Event
	for range 600 {
		evs = append(evs, w.Next())
	}
	header := func(ev dbzgen.Event) map[string]string {
		hs, err := gen.Headers(ev)
		require.NoError(t, err)
		out := map[string]string{}
		for _, h := range hs {
			out[h.Key] = string(h.Value)
		}
		return out
	}
	n := 0
	for i, del := range evs[:len(evs)-2] {
		if del.Tombstone || del.OldKey != nil {
			continue // checked with their delete
		}
		if del.NewKey == nil {
			require.Empty(t, header(del), "only the halves of a key update carry headers")
			continue
		}
		n++
		tomb, ins := evs[i+1], evs[i+2]
		require.Equal(t, dbzgen.OpDelete, del.Op)
		require.True(t, tomb.Tombstone)
		require.Equal(t, del.Before, tomb.Before)
		require.Equal(t, dbzgen.OpCreate, ins.Op)
		require.Equal(t, del.Source, ins.Source, "one source block")
		require.Equal(t, int64(2), del.Source.SerialNo)
		require.Equal(t, del.Transaction.TotalOrder+1, ins.Transaction.TotalOrder)
		oldKey := fmt.Sprintf(`{"order_id":%v}`, del.Before["order_id"])
		newKey := fmt.Sprintf(`{"order_id":%v}`, ins.After["order_id"])
		require.NotEqual(t, oldKey, newKey)
		require.Equal(t, map[string]string{dbzgen.HeaderNewKey: newKey}, header(del))
		require.Equal(t, map[string]string{dbzgen.HeaderNewKey: newKey}, header(tomb))
		require.Equal(t, map[string]string{dbzgen.HeaderOldKey: oldKey}, header(ins))
		// The row moves with its other columns as the update left them.
		require.Equal(t, del.Before["customer_id"] != nil, ins.After["customer_id"] != nil)
	}
	require.Positive(t, n)
	require.Equal(t, n, w.Counts().KeyUpdates)
}

// Zero new options leave a seed's sequence as it was: the key-update and
// late-update draws happen only when their options are set.
func TestWorkloadNewShapesOffKeepSequences(t *testing.T) {
	gen := dbzgen.New(nil, dbzgen.DefaultOptions())
	orders, err := gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 3, Keys: 10, Snapshot: true, MaxTxEvents: 3, KeyChangeRatio: 0.1,
		Redeliver: 0.05, TransactionTopic: true, LateEnd: 0.3, DeleteRatio: 0.2}, orders)
	require.NoError(t, err)
	sum := sha256.New()
	for range 500 {
		key, value, err := gen.EncodeJSON(w.Next(), dbzgen.DecimalNumeric)
		require.NoError(t, err)
		sum.Write(key)
		sum.Write(value)
	}
	require.Zero(t, w.Counts().KeyUpdates)
	require.Zero(t, w.Counts().LateUpdates)
	require.Positive(t, w.Counts().KeyChanges)
	// The digest of the sequence the generator gave before key updates and
	// late updates existed.
	require.Equal(t, "86b9a9c60789cb7be82568b3e09112bbbd694aff19f0ee0104fff72928e478db", hex.EncodeToString(sum.Sum(nil)))
}

func TestWorkloadSnapshotMarkersAndTombstones(t *testing.T) {
	gen := dbzgen.New(nil, dbzgen.DefaultOptions())
	customers, err := gen.Table(dbzgen.Customers())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 4, Keys: 5, Snapshot: true, DeleteRatio: 0.5}, customers)
	require.NoError(t, err)
	var markers []string
	for range 5 {
		ev := w.Next()
		require.Equal(t, dbzgen.OpRead, ev.Op)
		require.Equal(t, "0000002a:00000b38:0003", ev.Source.CommitLSN.String())
		markers = append(markers, ev.Source.Snapshot)
	}
	require.Equal(t, []string{"first", "true", "true", "true", "last"}, markers)
	prev := dbzgen.Event{}
	for range 200 {
		ev := w.Next()
		if ev.Tombstone {
			require.Equal(t, dbzgen.OpDelete, prev.Op)
			require.Equal(t, prev.Before, ev.Before)
		}
		if prev.Op == dbzgen.OpDelete && !prev.Tombstone {
			require.True(t, ev.Tombstone, "a tombstone follows each delete")
		}
		prev = ev
	}
}

// Random rows must be valid for every type and mode: encode a few hundred
// events of the every-type table under several option sets.
func TestWorkloadEncodesEveryType(t *testing.T) {
	modes := []dbzgen.Options{dbzgen.DefaultOptions()}
	o := dbzgen.DefaultOptions()
	o.TimePrecision, o.DecimalHandling, o.BinaryHandling, o.Layout = dbzgen.TimeConnect, dbzgen.DecimalString, dbzgen.BinaryHex, dbzgen.Layout25
	modes = append(modes, o)
	o.TimePrecision, o.DecimalHandling, o.BinaryHandling, o.Layout, o.PropagateSourceTypes = dbzgen.TimeAdaptiveMicroseconds, dbzgen.DecimalDouble, dbzgen.BinaryBase64, dbzgen.Layout26, true
	modes = append(modes, o)
	for i, opts := range modes {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			h := newHarness(t, opts)
			tab, err := h.gen.Table(dbzgen.EveryType())
			require.NoError(t, err)
			w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: uint64(i), Keys: 40, Snapshot: true, MaxTxEvents: 3, TransactionMetadata: true}, tab)
			require.NoError(t, err)
			for range 300 {
				ev := w.Next()
				key, value, err := h.gen.Encode(t.Context(), ev)
				require.NoError(t, err)
				require.NotNil(t, key)
				if ev.Tombstone {
					require.Nil(t, value)
					continue
				}
				env := h.decode(t, value)
				require.Equal(t, string(ev.Op), env["op"])
			}
		})
	}
}

func TestWorkloadNeedsAKey(t *testing.T) {
	gen := dbzgen.New(nil, dbzgen.DefaultOptions())
	tab, err := gen.Table(dbzgen.TableDef{Database: "d", Schema: "dbo", Name: "t", Columns: []dbzgen.Column{{Name: "a", Type: "int"}}})
	require.NoError(t, err)
	_, err = dbzgen.NewWorkload(dbzgen.WorkloadOptions{}, tab)
	require.ErrorIs(t, err, dbzgen.ErrBadTable)

	tab, err = gen.Table(dbzgen.TableDef{Database: "d", Schema: "dbo", Name: "t", Columns: []dbzgen.Column{{Name: "a", Type: "tinyint"}}, Key: []string{"a"}})
	require.NoError(t, err)
	_, err = dbzgen.NewWorkload(dbzgen.WorkloadOptions{Keys: 300}, tab)
	require.ErrorIs(t, err, dbzgen.ErrBadTable)
}

// The sample database: two tables share one log, so positions increase
// across both, snapshot markers span both, and each table converges.
func TestWorkloadOverTheSampleDatabase(t *testing.T) {
	h := newHarness(t, dbzgen.DefaultOptions())
	customers, err := h.gen.Table(dbzgen.Customers())
	require.NoError(t, err)
	orders, err := h.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 5, Keys: 3, Snapshot: true, MaxTxEvents: 4, TransactionMetadata: true}, customers, orders)
	require.NoError(t, err)

	sinks := map[*dbzgen.Table]map[string]dbzgen.Row{customers: {}, orders: {}}
	keyCol := map[*dbzgen.Table]string{customers: "customer_id", orders: "order_id"}
	var markers []string
	for range 6 {
		ev := w.Next()
		markers = append(markers, ev.Source.Snapshot)
		sinks[ev.Table][keyOf(ev, keyCol[ev.Table])] = ev.After
	}
	require.Equal(t, []string{"first", "true", "last_in_data_collection", "first_in_data_collection", "true", "last"}, markers)
	var last dbzgen.Event
	for range 500 {
		ev := w.Next()
		if ev.Tombstone {
			continue
		}
		if last.Table != nil && ev.Source.CommitLSN == last.Source.CommitLSN && ev.Transaction.DataCollectionOrder > 1 {
			require.Greater(t, ev.Transaction.TotalOrder, last.Transaction.TotalOrder)
		}
		if last.Table != nil {
			require.Equal(t, 1, comparePos(position(ev), position(last)), "one increasing log over both tables")
		}
		last = ev
		k := keyOf(ev, keyCol[ev.Table])
		if ev.Op == dbzgen.OpDelete {
			delete(sinks[ev.Table], k)
		} else {
			sinks[ev.Table][k] = ev.After
		}
		_, _, err := h.gen.Encode(t.Context(), ev)
		require.NoError(t, err)
	}
	for tab, sink := range sinks {
		var got []dbzgen.Row
		for _, r := range sink {
			got = append(got, r)
		}
		require.ElementsMatch(t, w.Rows(tab), got, tab.Topic())
	}
	require.Nil(t, w.Rows(nil))
}

func TestWorkloadKeyChangeIsDeleteTombstoneInsert(t *testing.T) {
	gen := dbzgen.New(nil, dbzgen.DefaultOptions())
	orders, err := gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 9, Keys: 10, KeyChangeRatio: 0.5, DeleteRatio: -1}, orders)
	require.NoError(t, err)
	var evs []dbzgen.Event
	for range 300 {
		evs = append(evs, w.Next())
	}
	found := 0
	for i := 0; i+2 < len(evs); i++ {
		d, tomb, c := evs[i], evs[i+1], evs[i+2]
		if d.Op != dbzgen.OpDelete || d.Tombstone {
			continue
		}
		// With DeleteRatio < 0 every delete is half of a key change.
		require.True(t, tomb.Tombstone)
		require.Equal(t, dbzgen.OpCreate, c.Op)
		require.Equal(t, d.Source.ChangeLSN, c.Source.ChangeLSN)
		require.Equal(t, d.Source.CommitLSN, c.Source.CommitLSN)
		require.Equal(t, []int64{1, 2}, []int64{d.Source.SerialNo, c.Source.SerialNo})
		require.NotEqual(t, d.Before["order_id"], c.After["order_id"])
		require.Equal(t, d.Before["status"], c.After["status"], "the row moves, its values stay")
		found++
	}
	require.Positive(t, found)
}

// With Placeholders, updates send unchanged LOB columns as the placeholder:
// a sink that keeps the stored value for them converges to the source's
// rows, which never hold the placeholder; and the stream has the shape
// that needs it, a snapshot read followed by an update of that row
// without its LOB.
func TestWorkloadPlaceholders(t *testing.T) {
	h := newHarness(t, dbzgen.DefaultOptions())
	tickets, err := h.gen.Table(dbzgen.Tickets())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 12, Keys: 20, Snapshot: true, MaxTxEvents: 3, Placeholders: 0.8, Redeliver: 0.1, KeyChangeRatio: 0.05}, tickets)
	require.NoError(t, err)
	type stored struct {
		pos [3][]byte
		row dbzgen.Row
	}
	sink := map[string]stored{}
	read := map[string]bool{} // keys whose snapshot read the sink applied
	afterRead := 0
	for range 1500 {
		ev := w.Next()
		if ev.Tombstone {
			continue
		}
		_, _, err := h.gen.Encode(t.Context(), ev)
		require.NoError(t, err)
		k, p := keyOf(ev, "ticket_id"), position(ev)
		cur, ok := sink[k]
		if ok && comparePos(p, cur.pos) <= 0 {
			continue
		}
		var row dbzgen.Row
		switch ev.Op {
		case dbzgen.OpDelete:
			delete(read, k)
		case dbzgen.OpRead:
			read[k] = true
			row = ev.After
		default:
			row = maps.Clone(ev.After)
			for col, v := range row {
				if _, ph := v.(dbzgen.Placeholder); ph {
					require.Equal(t, dbzgen.OpUpdate, ev.Op)
					require.Contains(t, []string{"body", "attachment"}, col, "only LOBs")
					require.Equal(t, dbzgen.Placeholder{}, ev.Before[col], "in both images")
					row[col] = cur.row[col]
					if read[k] {
						afterRead++
					}
				}
			}
		}
		sink[k] = stored{pos: p, row: row}
	}
	var got []dbzgen.Row
	for _, s := range sink {
		if s.row != nil {
			got = append(got, s.row)
		}
	}
	require.ElementsMatch(t, w.Rows(tickets), got)
	require.Positive(t, w.Counts().Unavailable)
	require.Positive(t, afterRead, "updates without their LOB after a snapshot read")

	// Without the option nothing changes.
	plain, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 12, Keys: 20, Snapshot: true}, tickets)
	require.NoError(t, err)
	for range 500 {
		ev := plain.Next()
		for _, v := range ev.After {
			require.NotEqual(t, dbzgen.Placeholder{}, v)
		}
	}
	require.Zero(t, plain.Counts().Unavailable)
}

// TestWorkloadSnapshotSkipAndQuietStart: a table empty at the snapshot gets
// no read and no marker; a quiet table no change in its first transactions;
// a workload with every table quiet, or naming a table it lacks, is refused.
func TestWorkloadSnapshotSkipAndQuietStart(t *testing.T) {
	gen := dbzgen.New(nil, dbzgen.DefaultOptions())
	customers, err := gen.Table(dbzgen.Customers())
	require.NoError(t, err)
	orders, err := gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 3, Keys: 10, Snapshot: true, SnapshotSkip: []string{"orders"},
		QuietStart: map[string]int{"customers": 8}, TransactionTopic: true, MaxTxEvents: 3}, customers, orders)
	require.NoError(t, err)
	var markers []string
	ends := 0
	for range 400 {
		ev := w.Next()
		switch {
		case ev.Marker != nil:
			if ev.Marker.Status == dbzgen.TxEnd {
				ends++
			}
		case ev.Op == dbzgen.OpRead:
			require.Equal(t, customers, ev.Table, "the snapshot reads no row of orders")
			if ev.Source.Snapshot != "true" {
				markers = append(markers, ev.Source.Snapshot)
			}
		case !ev.Tombstone && ends < 8 && ev.Table == customers:
			require.NotNil(t, ev.Transaction)
			require.Fail(t, "customers changed in a quiet transaction", "transaction %s", ev.Transaction.ID)
		}
	}
	require.Equal(t, []string{"first", "last"}, markers)
	require.Positive(t, w.Counts().Creates)
	_, err = dbzgen.NewWorkload(dbzgen.WorkloadOptions{QuietStart: map[string]int{"customers": 1, "orders": 2}}, customers, orders)
	require.ErrorIs(t, err, dbzgen.ErrBadTable)
	_, err = dbzgen.NewWorkload(dbzgen.WorkloadOptions{SnapshotSkip: []string{"order"}}, customers, orders)
	require.ErrorIs(t, err, dbzgen.ErrBadTable)
}
