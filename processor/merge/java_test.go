package merge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/internal/harness/cdcmodel"
	"github.com/cdc2delta/cdc2delta/processor/cdctable"
)

// javaDir holds SQL Server events built by Debezium's own classes
// (codecs/testdata/debezium/java/README.md).
const javaDir = "../../codecs/testdata/debezium/java"

type javaSchemas map[int]string

func (s javaSchemas) SchemaByID(_ context.Context, id int) (string, error) {
	if v, ok := s[id]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%w: %d", codecs.ErrUnknownSchema, id)
}

// javaRecords decodes a golden directory's records through one converter.
func javaRecords(t *testing.T, dir string, converter codecs.Converter, opts codecs.Options) []Record {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return string(b)
	}
	opts.Converter = converter
	var src codecs.SchemaSource
	if converter == codecs.ConverterAvro {
		src = javaSchemas{1: read("key.avsc"), 2: read("value.avsc")}
	}
	dec, err := codecs.NewDecoder(src, opts)
	require.NoError(t, err)
	tp := cdctable.TopicPartition{Topic: "shop.sales.dbo.all_types"}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader([]byte(read("events.jsonl"))))
	sc.Buffer(nil, 4<<20)
	for off := int64(0); sc.Scan(); off++ {
		var e struct {
			KeyAvro   []byte  `json:"key_avro"`
			ValueAvro []byte  `json:"value_avro"`
			KeyJSON   string  `json:"key_json"`
			ValueJSON *string `json:"value_json"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		key, value := e.KeyAvro, e.ValueAvro
		if converter == codecs.ConverterJSON {
			key, value = []byte(e.KeyJSON), nil
			if e.ValueJSON != nil {
				value = []byte(*e.ValueJSON)
			}
		}
		ch, err := dec.Decode(t.Context(), key, value)
		require.NoError(t, err, "record %d", off)
		out = append(out, Record{TopicPartition: tp, Offset: off, Change: ch})
	}
	require.NoError(t, sc.Err())
	return out
}

// TestJavaGoldensTables applies the events Debezium's SQL Server classes
// built, one commit per record, to a table through the Avro converter and
// to another through the JsonConverter: every version must equal the model
// (values at the edges of every SQL Server type's range written to Parquet
// and read back), and the two tables must hold the same rows.
func TestJavaGoldensTables(t *testing.T) {
	dirs, err := os.ReadDir(javaDir)
	require.NoError(t, err)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		t.Run(d.Name(), func(t *testing.T) {
			opts := codecs.Options{}
			switch d.Name() {
			case "binary_base64":
				opts.BinaryHandling = codecs.BinaryBase64
			case "binary_hex":
				opts.BinaryHandling = codecs.BinaryHex
			}
			var tables [][]string
			for _, conv := range []codecs.Converter{codecs.ConverterAvro, codecs.ConverterJSON} {
				recs := javaRecords(t, filepath.Join(javaDir, d.Name()), conv, opts)
				store := newMemStore()
				s, err := Open(t.Context(), Options{Store: store, TableName: "all_types", Mode: ModeDV, DeleteMode: DeleteHard, EnableChangeDataFeed: true})
				require.NoError(t, err)
				model := cdcmodel.New(cdcmodel.Options{})
				var cols []string
				for _, r := range recs {
					tp := cdcmodel.TopicPartition{Topic: r.Topic, Partition: r.Partition}
					model.Feed(cdcmodel.Record{TopicPartition: tp, Offset: r.Offset, Change: r.Change})
					b := Batch{LastOffsets: map[cdctable.TopicPartition]int64{r.TopicPartition: r.Offset}}
					if r.Change.Op != codecs.OpTombstone {
						b.Records = []Record{r}
					}
					res, err := s.Apply(t.Context(), b)
					require.NoError(t, err, "%s offset %d", conv, r.Offset)
					want, ok := model.Commit(map[cdcmodel.TopicPartition]int64{tp: r.Offset})
					require.Equal(t, ok, res.Committed, "offset %d", r.Offset)
					if !ok {
						continue
					}
					got, err := cdcmodel.ReadVersion(t.Context(), store, res.Version, model.KeyColumns())
					require.NoError(t, err)
					cols = model.Columns()
					require.Equal(t, cdcmodel.RenderRows(model.Rows(), cols), cdcmodel.RenderRows(got.Rows, cols), "%s version %d", conv, res.Version)
					require.Equal(t, cdcmodel.RenderChanges(want.Changes, cols), cdcmodel.RenderChanges(got.Changes, cols), "%s version %d", conv, res.Version)
				}
				require.NoError(t, s.Close())
				require.Len(t, model.Rows(), 3, "ids 1, 2 and 5 live")
				tables = append(tables, cdcmodel.RenderRows(model.Rows(), cols))
			}
			require.Equal(t, tables[0], tables[1], "Avro and JSON tables")
		})
	}
}
