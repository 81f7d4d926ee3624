package deltalog

import (
	"fmt"
	"testing"
)

// go test ./deltalog -run '^$' -bench BenchmarkParseCommit -count 6
func BenchmarkParseCommit(b *testing.B) {
	commit := []byte(fmt.Sprintf(`{"commitInfo":{"timestamp":%d,"operation":"WRITE","operationParameters":{"mode":"\"Append\""},"readVersion":%d,"isolationLevel":"Serializable","isBlindAppend":true,"engineInfo":"cdc2delta/0.1.0","txnId":"5f0e4c1a-8a53-4c59-9d0c-3f8f2b3c0a11"}}`+"\n"+
		`{"add":{"path":"part-%05d-8f2b1f8e-3c52-4a55-9b0e-5a1e3e0c0001.c000.zstd.parquet","partitionValues":{},"size":123456,"modificationTime":%d,"dataChange":true,"stats":"{\"numRecords\":1000,\"minValues\":{\"id\":1},\"maxValues\":{\"id\":999},\"nullCount\":{\"id\":0}}"}}`+"\n"+
		`{"txn":{"appId":"group/topic/0","version":%d,"lastUpdated":%d}}`+"\n", 1, 1, 1, 1, 1, 1))
	b.SetBytes(int64(len(commit)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseCommit("x", commit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}
