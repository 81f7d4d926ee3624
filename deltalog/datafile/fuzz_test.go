package datafile

import (
	"bytes"
	"errors"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// FuzzReadDataFile feeds arbitrary bytes to Read: it must return rows or an error that
// names the file, never panic. Seeds are real files from the writer, whole and cut.
//
//	go test -run '^$' -fuzz FuzzReadDataFile -fuzztime 60s ./deltalog/datafile
func FuzzReadDataFile(f *testing.F) {
	const maxInput = 1 << 16
	seed := func(schema *deltalog.StructType, rows [][]any) {
		s := newStore()
		w, err := NewWriter(Options{Schema: schema, Properties: map[string]string{propCodec: "snappy"}})
		if err != nil {
			f.Fatal(err)
		}
		adds, err := w.Write(f.Context(), s, rows)
		if err != nil {
			f.Fatal(err)
		}
		rc, err := s.Get(f.Context(), adds[0].Path)
		if err != nil {
			f.Fatal(err)
		}
		defer rc.Close()
		buf := make([]byte, adds[0].Size)
		if _, err := rc.Read(buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf)
		f.Add(buf[:len(buf)/2])
		f.Add(buf[len(buf)/3:])
	}
	seed(idSchema(), idRows(20))
	seed(nestedSchema(), [][]any{
		{int64(1), []any{int64(5), []any{"a", nil}}, []any{int32(1), nil}, []any{"x"}, []KV{{"k", int64(1)}}, []any{[]any{nil}}, []any{nil}},
	})
	f.Add([]byte("PAR1PAR1"))
	schemas := []*deltalog.StructType{idSchema(), nestedSchema()}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput || claimsTooMuch(data) {
			return
		}
		s := newStore()
		if err := s.Put(t.Context(), "f.parquet", data); err != nil {
			t.Fatal(err)
		}
		for _, schema := range schemas {
			rows, err := Read(t.Context(), s, &deltalog.Add{Path: "f.parquet"}, schema, ReadOptions{})
			if err != nil {
				var cf *deltalog.CorruptFileError
				if !errors.As(err, &cf) || cf.Path != "f.parquet" {
					t.Fatalf("error does not name the file: %v", err)
				}
				continue
			}
			for _, r := range rows {
				if len(r) != len(schema.Fields) {
					t.Fatalf("row of %d values for %d columns", len(r), len(schema.Fields))
				}
			}
		}
	})
}

// claimsTooMuch skips inputs whose footer promises more rows or bytes than a fuzz run can
// allocate: Parquet's RLE lets a few bytes stand for billions of values, a cost inherent
// to the format rather than a reader bug.
func claimsTooMuch(data []byte) (skip bool) {
	defer func() {
		if recover() != nil {
			skip = false // let Read meet the panic and prove it recovers
		}
	}()
	if checkFraming(data) != nil {
		return false
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return false
	}
	if f.NumRows() > 1<<16 || checkPages(data, f, pageLimits{uncompressed: 1 << 24, values: 1 << 18}) != nil {
		return true
	}
	for _, rg := range f.Metadata().RowGroups {
		if rg.NumRows > 1<<16 {
			return true
		}
		for _, c := range rg.Columns {
			if c.MetaData.NumValues > 1<<18 || c.MetaData.TotalUncompressedSize > 1<<24 {
				return true
			}
		}
	}
	return false
}
