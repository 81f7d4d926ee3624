package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

func TestBatchFileRoundTrip(t *testing.T) {
	g := newGenerator(4, 1_000)
	ws, err := selectWorkloads(workloads(testPreset), "5")
	require.NoError(t, err)
	ws[0].Batch, ws[0].Batches = 500, 1
	cs := g.batches(ws[0])[0].Changes
	path := filepath.Join(t.TempDir(), batchFileName(1))
	require.NoError(t, writeBatch(path, cs))
	got, err := readBatch(path)
	require.NoError(t, err)
	require.Equal(t, cs, got)

	// The file's schema is the contract's: names, nullability and types.
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	pf, err := parquet.OpenFile(f, st.Size())
	require.NoError(t, err)
	want := map[string]string{
		"id": "INT64", "customer_id": "INT64", "status": "STRING", "amount": "DOUBLE", "quantity": "INT32",
		"note": "STRING", "updated_at": "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)",
		"_cdc_position": "STRING", "_cdc_op": "STRING", "_cdc_commit_time": "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)",
	}
	fields := pf.Schema().Fields()
	require.Len(t, fields, len(want))
	for _, fl := range fields {
		typ := fl.Type().String()
		if lt := fl.Type().LogicalType(); lt != nil {
			typ = lt.String()
		}
		require.Contains(t, want, fl.Name())
		require.Contains(t, []string{want[fl.Name()], "INT(32,true)", "INT(64,true)"}, typ, "column %s", fl.Name())
		nullable := fl.Name() != "id" && fl.Name() != "_cdc_position" && fl.Name() != "_cdc_op" && fl.Name() != "_cdc_commit_time"
		require.Equal(t, nullable, fl.Optional(), "nullability of %s", fl.Name())
	}
}

func TestBatchRowPositionOrder(t *testing.T) {
	// Text order of positions is source order, across digit-count changes.
	seqs := []int64{1, 9, 10, 255, 256, 65_535, 1 << 40}
	for i := 1; i < len(seqs); i++ {
		a, b := positionOf(seqs[i-1]).Hex(), positionOf(seqs[i]).Hex()
		require.Less(t, a, b)
		require.Len(t, b, 56)
		s, err := seqOf(b)
		require.NoError(t, err)
		require.Equal(t, seqs[i], s)
	}
}

func TestBatchRowMalformed(t *testing.T) {
	good := change{ID: 3, Op: 'u', Seq: 42, Row: row{Status: "paid", Note: "n", UpdatedAt: commitMillis(42) * 1000}}.batchRow()
	tests := []struct {
		name   string
		break_ func(*batchRow)
	}{
		{name: "op", break_: func(b *batchRow) { b.Op = "x" }},
		{name: "empty op", break_: func(b *batchRow) { b.Op = "" }},
		{name: "position", break_: func(b *batchRow) { b.Position = "zz" }},
		{name: "foreign position", break_: func(b *batchRow) { b.Position = positionOf(42).Hex()[:54] + "02" }},
		{name: "null column", break_: func(b *batchRow) { b.Note = nil }},
		{name: "commit time", break_: func(b *batchRow) { b.CommitTime++ }},
	}
	_, err := good.change()
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := good
			tt.break_(&b)
			_, err := b.change()
			require.ErrorIs(t, err, errBatchFile)
		})
	}
}

func FuzzBatchRowChange(f *testing.F) {
	f.Add(int64(1), positionOf(1).Hex(), "d", commitMillis(1)*1000)
	f.Add(int64(7), positionOf(99).Hex(), "u", commitMillis(99)*1000)
	f.Add(int64(7), "", "c", int64(0))
	f.Fuzz(func(t *testing.T, id int64, pos, op string, commit int64) {
		s, n := "s", "n"
		var cid, at int64
		var amt float64
		var q int32
		b := batchRow{ID: id, Position: pos, Op: op, CommitTime: commit, CustomerID: &cid, Status: &s, Amount: &amt, Quantity: &q, Note: &n, UpdatedAt: &at}
		c, err := b.change()
		if err != nil {
			require.ErrorIs(t, err, errBatchFile)
			return
		}
		// What decodes encodes back to the same position and op.
		back := c.batchRow()
		require.Equal(t, pos, back.Position)
		require.Equal(t, op, back.Op)
		require.Equal(t, commit, back.CommitTime)
	})
}
