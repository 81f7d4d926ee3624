package deltalog_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

func TestMinimalProtocol(t *testing.T) {
	plain := testSchema()
	ntz := &deltalog.StructType{Fields: []deltalog.StructField{
		{Name: "s", Type: &deltalog.StructType{Fields: []deltalog.StructField{{Name: "t", Type: deltalog.TypeTimestampNTZ, Nullable: true}}}, Nullable: true},
	}}
	cm := map[string]string{"delta.columnMapping.mode": "name"}
	tests := []struct {
		name   string
		schema *deltalog.StructType
		config map[string]string
		want   deltalog.Protocol
	}{
		{"plain", plain, nil, deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{"appendOnly stays legacy", plain, map[string]string{"delta.appendOnly": "true"}, deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{"nested timestamp_ntz", ntz, nil, deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"timestampNtz"}}},
		{"column mapping legacy", plain, cm, deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}},
		{"cdf legacy", plain, map[string]string{"delta.enableChangeDataFeed": "true"}, deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 4}},
		{"cdf + column mapping", plain, map[string]string{"delta.enableChangeDataFeed": "true", "delta.columnMapping.mode": "name"},
			deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}},
		// plain has a NOT NULL column, which Spark wants listed as invariants on writer 7.
		{"deletion vectors", plain, map[string]string{"delta.enableDeletionVectors": "true"}, deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "invariants"}}},
		{"ntz + column mapping", ntz, cm, deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "timestampNtz"}, WriterFeatures: []string{"columnMapping", "timestampNtz"}}},
		{"ntz + cdf", ntz, map[string]string{"delta.enableChangeDataFeed": "true"}, deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"changeDataFeed", "timestampNtz"}}},
		{"ict only", plain, map[string]string{"delta.enableInCommitTimestamps": "true"}, deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"inCommitTimestamp", "invariants"}}},
		{"all four", ntz, map[string]string{"delta.enableChangeDataFeed": "true", "delta.columnMapping.mode": "name", "delta.enableDeletionVectors": "true"},
			deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
				ReaderFeatures: []string{"columnMapping", "deletionVectors", "timestampNtz"},
				WriterFeatures: []string{"changeDataFeed", "columnMapping", "deletionVectors", "timestampNtz"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := deltalog.MinimalProtocol(tc.schema, tc.config)
			require.Equal(t, tc.want, got)
			require.NoError(t, got.CheckRead())
			require.NoError(t, got.CheckWrite(nil, nil))
		})
	}
}

// TestMinimalFeaturesProtocol: column mapping alone is a reader feature, not legacy
// reader 2, which delta-rs's pyarrow reader reads without applying the mapping.
func TestMinimalFeaturesProtocol(t *testing.T) {
	plain := testSchema()
	cm := map[string]string{"delta.columnMapping.mode": "name"}
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"},
		WriterFeatures: []string{"columnMapping", "invariants"}}, deltalog.MinimalFeaturesProtocol(plain, cm))
	require.Equal(t, deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"},
		WriterFeatures: []string{"changeDataFeed", "columnMapping", "invariants"}},
		deltalog.MinimalFeaturesProtocol(plain, map[string]string{"delta.columnMapping.mode": "name", "delta.enableChangeDataFeed": "true"}))
	for _, conf := range []map[string]string{nil, {"delta.enableChangeDataFeed": "true"}, {"delta.enableDeletionVectors": "true"}} {
		require.Equal(t, deltalog.MinimalProtocol(plain, conf), deltalog.MinimalFeaturesProtocol(plain, conf), "%v", conf)
	}
}

func TestProtocolChecks(t *testing.T) {
	tests := []struct {
		name        string
		p           deltalog.Protocol
		readFeature string // "" = readable
		writeFeat   string // "" = writable
	}{
		{"legacy 1,2", deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, "", ""},
		{"legacy 2,6 identity ok while unused", deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 6}, "", ""},
		{"reader 4", deltalog.Protocol{MinReaderVersion: 4, MinWriterVersion: 7}, "minReaderVersion 4", "minReaderVersion 4"},
		{"writer 8", deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 8}, "", "minWriterVersion 8"},
		{"unknown writer feature readable", deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"zzz"}}, "", "zzz"},
		{"type widening", deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"typeWidening"}, WriterFeatures: []string{"typeWidening"}},
			"typeWidening", "typeWidening"},
		{"v2 checkpoint read only", deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"v2Checkpoint"}, WriterFeatures: []string{"v2Checkpoint"}},
			"", "v2Checkpoint"},
		{"row tracking", deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"rowTracking", "domainMetadata"}}, "", "rowTracking"},
		{"catalog managed", deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"catalogManaged"}, WriterFeatures: []string{"catalogManaged"}},
			"catalogManaged", "catalogManaged"},
		{"supported set", deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors", "columnMapping", "timestampNtz", "vacuumProtocolCheck"},
			WriterFeatures: []string{"deletionVectors", "columnMapping", "timestampNtz", "vacuumProtocolCheck", "appendOnly", "invariants",
				"changeDataFeed", "domainMetadata", "inCommitTimestamp", "checkpointProtection"}}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check := func(err error, feature string, write bool) {
				if feature == "" {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, deltalog.ErrUnsupportedFeature)
				ue, ok := errors.AsType[*deltalog.UnsupportedFeatureError](err)
				require.True(t, ok)
				require.Equal(t, feature, ue.Feature)
				require.Equal(t, write, ue.Write)
				require.Contains(t, err.Error(), feature)
			}
			check(tc.p.CheckRead(), tc.readFeature, false)
			check(tc.p.CheckWrite(nil, nil), tc.writeFeat, true)
		})
	}
}

func TestCheckWriteActiveColumnFeatures(t *testing.T) {
	withMeta := func(k string, v any) *deltalog.StructType {
		return &deltalog.StructType{Fields: []deltalog.StructField{{Name: "x", Type: deltalog.TypeLong, Nullable: true, Metadata: map[string]any{k: v}}}}
	}
	legacy := deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 6}
	tests := []struct {
		name    string
		schema  *deltalog.StructType
		config  map[string]string
		feature string
	}{
		{"invariant", withMeta("delta.invariants", `{"expression":{"expression":"x > 3"}}`), nil, "invariants"},
		{"generated", withMeta("delta.generationExpression", "1"), nil, "generatedColumns"},
		{"identity", withMeta("delta.identity.start", 1), nil, "identityColumns"},
		{"check constraint", testSchema(), map[string]string{"delta.constraints.pos": "id > 0"}, "checkConstraints"},
		{"comment is fine", withMeta("comment", "hello"), nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := legacy.CheckWrite(&deltalog.Metadata{Configuration: tc.config}, tc.schema)
			if tc.feature == "" {
				require.NoError(t, err)
				return
			}
			ue, ok := errors.AsType[*deltalog.UnsupportedFeatureError](err)
			require.True(t, ok, "%v", err)
			require.Equal(t, tc.feature, ue.Feature)
		})
	}
	// At (1,2) identity columns are not a writer requirement.
	require.NoError(t, (&deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}).CheckWrite(nil, withMeta("delta.identity.start", 1)))
}

func TestUpgradeProtocol(t *testing.T) {
	tests := []struct {
		name      string
		cur, need deltalog.Protocol
		want      deltalog.Protocol
	}{
		{"legacy max", deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5},
			deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}},
		{"legacy + dv lists implied features", deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
			deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}},
			deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"},
				WriterFeatures: []string{"appendOnly", "deletionVectors", "invariants"}}},
		{"column mapping legacy + ntz", deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5},
			deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"timestampNtz"}},
			deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping", "timestampNtz"},
				WriterFeatures: []string{"appendOnly", "changeDataFeed", "checkConstraints", "columnMapping", "generatedColumns", "invariants", "timestampNtz"}}},
		{"table features stay features", deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"}, WriterFeatures: []string{"columnMapping", "invariants"}},
			deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"}, WriterFeatures: []string{"columnMapping", "invariants"}},
			deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"}, WriterFeatures: []string{"columnMapping", "invariants"}}},
		{"spark's (2,7) stays on table features", deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", "columnMapping", "invariants"}},
			deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 4},
			deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"},
				WriterFeatures: []string{"appendOnly", "changeDataFeed", "checkConstraints", "columnMapping", "generatedColumns", "invariants"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := deltalog.UpgradeProtocol(tc.cur, tc.need)
			require.Equal(t, tc.want, got)
			for _, f := range tc.cur.WriterFeatureSet() {
				require.True(t, got.HasWriterFeature(f), f)
			}
		})
	}
}
