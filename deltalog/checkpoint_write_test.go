package deltalog

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func ckptPtr[T any](v T) *T { return &v }

// ckptSampleState is a table state using every checkpoint column we write.
func ckptSampleState(numAdds int) []Action {
	state := []Action{
		{Txn: &Txn{AppID: "kafka/orders/0", Version: 184467, LastUpdated: ckptPtr(int64(1712333988110))}},
		{Protocol: &Protocol{
			MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors", "timestampNtz"},
			WriterFeatures: []string{"deletionVectors", "timestampNtz", "domainMetadata"},
		}},
		{Metadata: &Metadata{
			ID:               "0f6f3bd0-4bd5-4b5e-9d8a-2a6d1f1b2c3d",
			Name:             "orders",
			Format:           Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}}]}`,
			PartitionColumns: []string{"p"},
			CreatedTime:      ckptPtr(int64(1712333900000)),
			Configuration:    map[string]string{"delta.enableDeletionVectors": "true", "delta.checkpointInterval": "10"},
		}},
		{Txn: &Txn{AppID: "no-last-updated", Version: 7}},
		{DomainMetadata: &DomainMetadata{Domain: "delta.rowTracking", Configuration: `{"rowIdHighWaterMark":99}`}},
		{Remove: &Remove{
			Path: "p=x/gone.parquet", DeletionTimestamp: ckptPtr(int64(1712333988000)), DataChange: true,
			ExtendedFileMetadata: true, PartitionValues: map[string]*string{"p": ckptPtr("x")}, Size: ckptPtr(int64(99)),
			Stats: `{"numRecords":1}`, Tags: map[string]string{"t": "v"},
			DeletionVector: &DeletionVector{StorageType: "u", PathOrInlineDV: "ab^-aqEH.-t@S}K{vb[*k^", Offset: ckptPtr(int32(1)), SizeInBytes: 36, Cardinality: 2},
		}},
		{Remove: &Remove{Path: "bare.parquet", DataChange: false}},
	}
	for i := range numAdds {
		add := &Add{
			Path:             fmt.Sprintf("p=%d/part-%05d-0b7a6c0e-51c6-4a5e-8f1b-2a2c0c2f0d%02d.c000.zstd.parquet", i%7, i, i%100),
			PartitionValues:  map[string]*string{"p": ckptPtr(fmt.Sprint(i % 7))},
			Size:             int64(1000 + i),
			ModificationTime: 1712333988000 + int64(i),
			DataChange:       true,
			Stats:            fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, 100, i*100, i*100+99),
		}
		switch i % 4 {
		case 1:
			add.PartitionValues = map[string]*string{"p": nil}
			add.Tags = map[string]string{"INSERTION_TIME": "1712333988000000", "OPTIMIZE_TARGET_SIZE": "268435456"}
		case 2:
			add.DeletionVector = &DeletionVector{StorageType: "u", PathOrInlineDV: "WYbkwCTB$gH)J7t?$/sK", Offset: ckptPtr(int32(1 + i)), SizeInBytes: 40, Cardinality: 3, MaxRowIndex: ckptPtr(int64(50))}
			add.BaseRowID = ckptPtr(int64(i * 100))
			add.DefaultRowCommitVersion = ckptPtr(int64(4))
		case 3:
			add.Stats = ""
			add.DeletionVector = &DeletionVector{StorageType: "i", PathOrInlineDV: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", SizeInBytes: 40, Cardinality: 6}
		}
		state = append(state, Action{Add: add})
	}
	return state
}

// ckptAsCheckpointed is what a checkpoint keeps of state: the same actions with
// dataChange=false on files and no stats or tags on removes, as Spark writes them.
func ckptAsCheckpointed(state []Action) []Action {
	out := make([]Action, 0, len(state))
	for _, a := range state {
		switch {
		case a.Add != nil:
			add := *a.Add
			add.DataChange = false
			a = Action{Add: &add}
		case a.Remove != nil:
			rm := *a.Remove
			rm.DataChange, rm.Stats, rm.Tags = false, "", nil
			a = Action{Remove: &rm}
		}
		out = append(out, a)
	}
	return out
}

func TestWriteCheckpointRoundTrip(t *testing.T) {
	s := newCkptTestStore()
	state := ckptSampleState(40)
	lc, err := writeCheckpoint(t.Context(), s, 12, state)
	require.NoError(t, err)
	require.Equal(t, int64(12), lc.Version)
	require.Equal(t, int64(len(state)), lc.Size)
	require.Equal(t, int64(40), *lc.NumOfAddFiles)
	require.Equal(t, int64(len(s.files[checkpointPath(12)])), *lc.SizeInBytes)

	got, err := readCheckpoint(t.Context(), s, []string{checkpointPath(12)})
	require.NoError(t, err)
	require.ElementsMatch(t, ckptAsCheckpointed(state), got)
	// Protocol and metaData lead, so streaming readers meet them first.
	require.NotNil(t, got[0].Protocol)
	require.NotNil(t, got[1].Metadata)

	onDisk, err := readLastCheckpoint(t.Context(), s)
	require.NoError(t, err)
	require.NotEmpty(t, onDisk.Checksum)
	onDisk.Checksum = ""
	require.Equal(t, &lc, onDisk)
}

func TestWriteCheckpointVariants(t *testing.T) {
	legacy := []Action{
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &Metadata{ID: "id", SchemaString: `{"type":"struct","fields":[]}`}},
		{Add: &Add{Path: "a.parquet", PartitionValues: map[string]*string{}, Size: 1, Stats: `{"numRecords":1}`}},
	}
	noStats := ckptSampleState(3)
	noStats[2].Metadata.Configuration = map[string]string{propWriteStatsAsJSON: "false"}

	tests := []struct {
		name    string
		state   []Action
		check   func(t *testing.T, got []Action)
		wantErr string
	}{
		{
			name:  "legacy protocol keeps feature lists null and fills required metadata",
			state: legacy,
			check: func(t *testing.T, got []Action) {
				require.Equal(t, &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, got[0].Protocol)
				md := got[1].Metadata
				require.Equal(t, "parquet", md.Format.Provider)
				require.Equal(t, map[string]string{}, md.Format.Options)
				require.Equal(t, []string{}, md.PartitionColumns)
				require.Equal(t, map[string]string{}, md.Configuration)
				require.Equal(t, map[string]*string{}, got[2].Add.PartitionValues)
			},
		},
		{
			name:  "writeStatsAsJson=false drops stats",
			state: noStats,
			check: func(t *testing.T, got []Action) {
				adds := 0
				for _, a := range got {
					if a.Add != nil {
						adds++
						require.Empty(t, a.Add.Stats)
					}
				}
				require.Equal(t, 3, adds)
			},
		},
		{
			name: "reader 3 with no features writes empty lists",
			state: []Action{
				{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7}},
				{Metadata: &Metadata{ID: "id"}},
			},
			check: func(t *testing.T, got []Action) {
				require.Equal(t, []string{}, got[0].Protocol.ReaderFeatures)
				require.Equal(t, []string{}, got[0].Protocol.WriterFeatures)
			},
		},
		{
			name: "commitInfo and cdc are not checkpointed",
			state: []Action{
				{CommitInfo: &CommitInfo{Operation: "WRITE"}},
				{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
				{CDC: &CDC{Path: "_change_data/x.parquet"}},
				{Metadata: &Metadata{ID: "id"}},
			},
			check: func(t *testing.T, got []Action) { require.Len(t, got, 2) },
		},
		{
			name:    "missing protocol",
			state:   []Action{{Metadata: &Metadata{ID: "id"}}},
			wantErr: "needs a protocol",
		},
		{
			name:    "two metaData actions",
			state:   []Action{{Protocol: &Protocol{}}, {Metadata: &Metadata{ID: "a"}}, {Metadata: &Metadata{ID: "b"}}},
			wantErr: "two metaData",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newCkptTestStore()
			_, err := writeCheckpoint(t.Context(), s, 5, tc.state)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Empty(t, s.files, "nothing is written for a bad state")
				return
			}
			require.NoError(t, err)
			got, err := readCheckpoint(t.Context(), s, []string{checkpointPath(5)})
			require.NoError(t, err)
			tc.check(t, got)
		})
	}
}

func TestWriteCheckpointKeepsNewerLastCheckpoint(t *testing.T) {
	s := newCkptTestStore()
	state := ckptSampleState(2)
	_, err := writeCheckpoint(t.Context(), s, 20, state)
	require.NoError(t, err)
	_, err = writeCheckpoint(t.Context(), s, 10, state)
	require.NoError(t, err)
	lc, err := readLastCheckpoint(t.Context(), s)
	require.NoError(t, err)
	require.Equal(t, int64(20), lc.Version)
	require.Contains(t, s.files, checkpointPath(10))

	// A corrupt hint is replaced by a good one.
	s.files[lastCheckpointPath] = []byte("{garbage")
	_, err = writeCheckpoint(t.Context(), s, 11, state)
	require.NoError(t, err)
	lc, err = readLastCheckpoint(t.Context(), s)
	require.NoError(t, err)
	require.Equal(t, int64(11), lc.Version)
}

// failingPutStore fails every Put, to show checkpoint failures surface as errors.
type failingPutStore struct{ *ckptTestStore }

var errCkptPut = errors.New("put failed")

func (failingPutStore) Put(_ context.Context, _ string, _ []byte) error { return errCkptPut }

func TestWriteCheckpointPutError(t *testing.T) {
	_, err := writeCheckpoint(t.Context(), failingPutStore{newCkptTestStore()}, 3, ckptSampleState(1))
	require.ErrorIs(t, err, errCkptPut)
	require.ErrorContains(t, err, checkpointPath(3))
}
