package datafile

import (
	"os"
	"testing"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestHunt2(t *testing.T) {
	data, err := os.ReadFile("/tmp/h7hang.bin")
	if err != nil {
		t.Skip()
	}
	s2 := newStore()
	s2.Put(t.Context(), "f.parquet", data)
	_, err = Read(t.Context(), s2, &deltalog.Add{Path: "f.parquet"}, idSchema(), ReadOptions{})
	t.Log(err)
}
