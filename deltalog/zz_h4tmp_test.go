package deltalog

import (
	"bytes"
	"encoding/json"
	"testing"
)

func BenchmarkTmpCI2(b *testing.B) {
	ci := []byte(`{"timestamp":1,"operation":"WRITE","operationParameters":{"mode":"\"Append\""},"readVersion":1,"isolationLevel":"Serializable","isBlindAppend":true,"engineInfo":"cdc2delta/0.1.0","txnId":"5f0e4c1a-8a53-4c59-9d0c-3f8f2b3c0a11"}`)
	b.Run("decoder", func(b *testing.B) {
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(ci))
			dec.DisallowUnknownFields()
			var f commitInfoFields
			_ = dec.Decode(&f)
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		for b.Loop() {
			var f commitInfoFields
			_ = json.Unmarshal(ci, &f)
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			var all map[string]json.RawMessage
			_ = json.Unmarshal(ci, &all)
			var c CommitInfo
			for k, v := range all {
				decodeCommitInfoField(&c, k, v)
			}
		}
	})
}
