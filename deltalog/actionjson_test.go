package deltalog_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestCommitInfoExtraRoundTrip(t *testing.T) {
	in := `{"timestamp":1697587497062,"operation":"MERGE","operationParameters":{"predicate":"[\"x\"]"},` +
		`"readVersion":0,"isolationLevel":"Serializable","isBlindAppend":false,` +
		`"operationMetrics":{"numTargetRowsInserted":"50"},"engineInfo":"Apache-Spark/3.5.0 Delta-Lake/3.0.0",` +
		`"txnId":"70de6669","userMetadata":"hello","clusterId":"c-1","tags":{"a":"b"}}`
	var ci deltalog.CommitInfo
	require.NoError(t, json.Unmarshal([]byte(in), &ci))
	require.Equal(t, "MERGE", ci.Operation)
	require.Equal(t, int64(1697587497062), *ci.Timestamp)
	require.Equal(t, "50", ci.OperationMetrics.Text("numTargetRowsInserted"))
	require.Equal(t, "hello", ci.UserMetadata)
	require.Equal(t, "c-1", ci.ClusterID)
	require.Len(t, ci.Extra, 1) // tags
	out, err := json.Marshal(ci)
	require.NoError(t, err)
	require.JSONEq(t, in, string(out))
}

func TestCommitInfoLenient(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, ci deltalog.CommitInfo)
	}{
		{"delta-rs numeric metrics", `{"timestamp":1,"operation":"WRITE","operationMetrics":{"num_added_files":1,"execution_time_ms":3},"clientVersion":"delta-rs.0.17"}`,
			func(t *testing.T, ci deltalog.CommitInfo) {
				require.Equal(t, "1", ci.OperationMetrics.Text("num_added_files"))
				require.JSONEq(t, `3`, string(ci.OperationMetrics["execution_time_ms"]))
				require.Contains(t, ci.Extra, "clientVersion")
			}},
		{"Databricks boolean and null parameters", `{"operation":"WRITE","operationParameters":{"mode":"Append","statsOnLoad":false,"description":null},` +
			`"userId":"42","userName":"ana@example.com","job":{"jobId":"987","jobName":"nightly"},"notebook":{"notebookId":"12"},"clusterId":"c-1","userMetadata":"backfill"}`,
			func(t *testing.T, ci deltalog.CommitInfo) {
				require.Equal(t, "Append", ci.OperationParameters.Text("mode"))
				require.Equal(t, "false", ci.OperationParameters.Text("statsOnLoad"))
				require.Equal(t, "null", ci.OperationParameters.Text("description"))
				require.Equal(t, "ana@example.com", ci.UserName)
				require.Equal(t, "42", ci.UserID)
				require.JSONEq(t, `{"jobId":"987","jobName":"nightly"}`, string(ci.Job))
				require.JSONEq(t, `{"notebookId":"12"}`, string(ci.Notebook))
				require.Equal(t, "c-1", ci.ClusterID)
				require.Equal(t, "backfill", ci.UserMetadata)
				require.Empty(t, ci.Extra)
			}},
		{"RESTORE numeric version", `{"operation":"RESTORE","operationParameters":{"version":3,"timestamp":null}}`,
			func(t *testing.T, ci deltalog.CommitInfo) {
				require.Equal(t, "3", ci.OperationParameters.Text("version"))
			}},
		{"a writer's own fields beside modelled ones", `{"timestamp":1,"operation":"MERGE","operationMetrics":{"numSourceRows":"3"},` +
			`"txnId":"t","cdc2delta.tombstones":"00000000000000000001.x.json","tags":{"a":"b"}}`,
			func(t *testing.T, ci deltalog.CommitInfo) {
				require.Equal(t, "MERGE", ci.Operation)
				require.Equal(t, "t", ci.TxnID)
				require.Equal(t, "3", ci.OperationMetrics.Text("numSourceRows"))
				require.Equal(t, map[string]string{"cdc2delta.tombstones": "00000000000000000001.x.json", "tags": `{"a":"b"}`},
					deltalog.OperationValues(ci.Extra).Texts())
			}},
		{"a key that case-folds to a modelled one stays apart", `{"operation":"WRITE","Operation":"X","tags":{}}`,
			func(t *testing.T, ci deltalog.CommitInfo) {
				require.Equal(t, "WRITE", ci.Operation)
				require.Contains(t, ci.Extra, "Operation")
				require.Contains(t, ci.Extra, "tags")
			}},
		{"modelled key of another type goes to Extra", `{"operation":"WRITE","operationMetrics":[1],"userName":7}`,
			func(t *testing.T, ci deltalog.CommitInfo) {
				require.Nil(t, ci.OperationMetrics)
				require.Empty(t, ci.UserName)
				require.Contains(t, ci.Extra, "operationMetrics")
				require.Contains(t, ci.Extra, "userName")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ci deltalog.CommitInfo
			require.NoError(t, json.Unmarshal([]byte(tc.in), &ci))
			tc.check(t, ci)
			out, err := json.Marshal(ci)
			require.NoError(t, err)
			require.JSONEq(t, tc.in, string(out), "commitInfo re-encodes as stored")
		})
	}
}

func TestOperationValuesText(t *testing.T) {
	ov := deltalog.OperationValues{
		"s": json.RawMessage(`"a \"b\""`), "n": json.RawMessage(`12.50`), "b": json.RawMessage(`true`),
		"null": json.RawMessage(`null`), "obj": json.RawMessage(`{ "k" : [1, 2] }`),
	}
	tests := []struct{ key, want string }{
		{"s", `a "b"`}, {"n", "12.50"}, {"b", "true"}, {"null", "null"}, {"obj", `{"k":[1,2]}`}, {"absent", ""},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			require.Equal(t, tc.want, ov.Text(tc.key))
		})
	}
}

func TestParseLogLine(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		ok      bool
		wantErr bool
		check   func(t *testing.T, a deltalog.Action)
	}{
		{"add", `{"add":{"path":"p","partitionValues":{"x":null,"y":"1"},"size":3,"modificationTime":4,"dataChange":true,"futureField":1}}`, true, false,
			func(t *testing.T, a deltalog.Action) {
				require.Equal(t, "p", a.Add.Path)
				require.Nil(t, a.Add.PartitionValues["x"])
				require.Equal(t, "1", *a.Add.PartitionValues["y"])
			}},
		{"txn", `{"txn":{"appId":"k/1","version":184467,"lastUpdated":1712333988110}}`, true, false,
			func(t *testing.T, a deltalog.Action) { require.Equal(t, int64(184467), a.Txn.Version) }},
		{"unknown action ignored", `{"fancyAction":{"a":1}}`, false, false, nil},
		{"blank", "   ", false, false, nil},
		{"not object", `[1,2]`, false, true, nil},
		{"truncated", `{"add":{"path":"p"`, false, true, nil},
		{"wrong type", `{"add":{"path":5}}`, false, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok, err := deltalog.ParseLogLine([]byte(tc.line))
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.ok, ok)
			if tc.check != nil {
				tc.check(t, a)
			}
		})
	}
}

func FuzzParseLogLine(f *testing.F) {
	for _, s := range []string{
		`{"commitInfo":{"timestamp":1,"operation":"WRITE","operationMetrics":{"n":"1"},"x":[1]}}`,
		`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}`,
		lineMeta,
		`{"add":{"path":"a%20b","partitionValues":{"p":null},"size":1,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":1}","deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2}}}`,
		`{"remove":{"path":"x","deletionTimestamp":1,"dataChange":false}}`,
		`{"txn":{"appId":"a","version":1,"lastUpdated":2}}`,
		`{"domainMetadata":{"domain":"d","configuration":"{}","removed":false}}`,
		`{"cdc":{"path":"_change_data/c.parquet","partitionValues":{},"size":1,"dataChange":false}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) > 1<<16 {
			return
		}
		a, ok, err := deltalog.ParseLogLine(line)
		if err != nil || !ok {
			return
		}
		// A parsed action re-encodes to a line that parses to the same action.
		b, err := json.Marshal(a)
		require.NoError(t, err)
		a2, ok2, err := deltalog.ParseLogLine(b)
		require.NoError(t, err)
		require.True(t, ok2)
		b2, err := json.Marshal(a2)
		require.NoError(t, err)
		require.JSONEq(t, string(b), string(b2))
	})
}
