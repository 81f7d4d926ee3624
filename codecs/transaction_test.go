package codecs_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/registry"
)

// TestTransactionTopic decodes the BEGIN and END events of a workload whose
// transactions span two tables, with some ENDs held back past the next
// transaction's first event: every END counts, per table, the data events
// that carry its id, and a data event's TxOrder numbers them from 1.
func TestTransactionTopic(t *testing.T) {
	h := newGenHarness(t, dbzgen.Options{}, codecs.Options{})
	var tables []*dbzgen.Table
	for _, def := range dbzgen.SampleDatabase() {
		tb, err := h.gen.Table(def)
		require.NoError(t, err)
		tables = append(tables, tb)
	}
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 5, Keys: 10, MaxTxEvents: 4, TransactionTopic: true, LateEnd: 0.5}, tables...)
	require.NoError(t, err)

	seen := map[string]map[codecs.TableID][]int64{} // data events' TxOrders by transaction and table
	begun := map[string]bool{}
	ended, late := 0, 0
	var open []string // begun, not ended, in order
	for i := range 600 {
		ev := w.Next()
		key, value, err := h.gen.Encode(t.Context(), ev)
		require.NoError(t, err)
		if ev.Marker == nil {
			if ev.Tombstone {
				continue
			}
			require.Equal(t, ev.Table.Topic(), h.gen.Topic(ev))
			ch, err := h.dec.Decode(t.Context(), key, value)
			require.NoError(t, err)
			require.True(t, begun[ch.TxID], "event %d: a data event after its BEGIN", i)
			if seen[ch.TxID] == nil {
				seen[ch.TxID] = map[codecs.TableID][]int64{}
			}
			seen[ch.TxID][ch.Table] = append(seen[ch.TxID][ch.Table], ch.TxOrder)
			continue
		}
		require.Equal(t, h.gen.TransactionTopic(), h.gen.Topic(ev))
		require.NotEmpty(t, key)
		tx, err := h.dec.DecodeTransaction(t.Context(), h.gen.TransactionTopic(), 0, int64(i), value)
		require.NoError(t, err)
		require.Equal(t, ev.Marker.ID, tx.ID)
		require.Equal(t, ev.Marker.ID, tx.Commit.String())
		switch tx.Status {
		case codecs.TxBegin:
			begun[tx.ID] = true
			open = append(open, tx.ID)
		case codecs.TxEnd:
			if open[len(open)-1] != tx.ID {
				late++ // the next transaction began first
			}
			var total int64
			for tbl, n := range tx.Counts {
				orders := seen[tx.ID][tbl]
				require.Len(t, orders, int(n), "END %s counts %s's events", tx.ID, tbl)
				for k, o := range orders {
					require.EqualValues(t, k+1, o)
				}
				total += n
			}
			require.Equal(t, total, tx.EventCount)
			require.Len(t, tx.Counts, len(seen[tx.ID]), "END %s names every table it touched", tx.ID)
			ended++
		}
	}
	require.Positive(t, ended)
	require.Positive(t, late, "some ENDs arrive after the next BEGIN")
}

// TestTransactionTopicErrors: a data event's schema is not a transaction
// event, and a transaction event is not a change; both say so.
func TestTransactionTopicErrors(t *testing.T) {
	h := newGenHarness(t, dbzgen.Options{}, codecs.Options{})
	orders, err := h.gen.Table(dbzgen.Orders())
	require.NoError(t, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 1, TransactionTopic: true}, orders)
	require.NoError(t, err)
	begin := w.Next()
	require.NotNil(t, begin.Marker)
	data := w.Next()
	require.Nil(t, data.Marker)
	_, txValue, err := h.gen.Encode(t.Context(), begin)
	require.NoError(t, err)
	_, dataValue, err := h.gen.Encode(t.Context(), data)
	require.NoError(t, err)

	_, err = h.dec.DecodeTransaction(t.Context(), "shop.transaction", 0, 7, dataValue)
	require.ErrorIs(t, err, codecs.ErrUnsupportedSchema)
	var de *codecs.DecodeError
	require.ErrorAs(t, err, &de)
	require.Equal(t, int64(7), de.Offset)
	_, err = h.dec.Decode(t.Context(), nil, txValue)
	require.ErrorIs(t, err, codecs.ErrUnsupportedSchema)
	_, err = h.dec.DecodeTransaction(t.Context(), "shop.transaction", 0, 8, []byte{0, 0, 0})
	require.ErrorIs(t, err, codecs.ErrBadHeader)
}

// FuzzDecodeTransaction: any value decodes to a consistent TxEvent or fails
// with a *DecodeError wrapping one of the package's sentinels.
func FuzzDecodeTransaction(f *testing.F) {
	reg, err := registry.New()
	require.NoError(f, err)
	srv := httptest.NewServer(reg.Handler())
	f.Cleanup(srv.Close)
	cl, err := sr.NewClient(sr.URLs(srv.URL))
	require.NoError(f, err)
	src, err := codecs.NewRegistry(codecs.RegistryOptions{URLs: []string{srv.URL}})
	require.NoError(f, err)
	dec, err := codecs.NewDecoder(src, codecs.Options{})
	require.NoError(f, err)
	gen := dbzgen.New(cl, dbzgen.Options{})
	orders, err := gen.Table(dbzgen.Orders())
	require.NoError(f, err)
	w, err := dbzgen.NewWorkload(dbzgen.WorkloadOptions{Seed: 2, MaxTxEvents: 3, TransactionTopic: true}, orders)
	require.NoError(f, err)
	for range 20 {
		ev := w.Next()
		_, value, err := gen.Encode(f.Context(), ev)
		require.NoError(f, err)
		f.Add(value)
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		tx, err := dec.DecodeTransaction(t.Context(), "shop.transaction", 0, 1, value)
		if err != nil {
			var de *codecs.DecodeError
			require.ErrorAs(t, err, &de)
			for _, s := range []error{codecs.ErrBadHeader, codecs.ErrUnknownSchema, codecs.ErrUnsupportedSchema, codecs.ErrBadBody, codecs.ErrBadEnvelope} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error without a sentinel: %v", err)
		}
		var sum int64
		for _, n := range tx.Counts {
			sum += n
		}
		require.Equal(t, tx.EventCount, sum)
		require.True(t, strings.EqualFold(tx.ID, tx.Commit.String()), "%s parses as %s", tx.ID, tx.Commit)
	})
}
