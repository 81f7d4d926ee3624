package deltalog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// maxFuzzCheckpoint bounds fuzz inputs; real checkpoints are larger, but the decoder's
// failure modes show on small files.
const maxFuzzCheckpoint = 1 << 20

// FuzzCheckpoint feeds arbitrary bytes to the Parquet checkpoint decoder: it must never
// panic, and every failure must be a *CorruptFileError naming the file.
//
//	go test -run '^$' -fuzz FuzzCheckpoint ./deltalog/
func FuzzCheckpoint(f *testing.F) {
	good, _, err := encodeCheckpoint(3, ckptSampleState(8))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte{})
	seeds, _ := filepath.Glob(filepath.Join("testdata", "checkpoints", "*", "_delta_log", "*.parquet"))
	sidecars, _ := filepath.Glob(filepath.Join("testdata", "checkpoints", "*", "_delta_log", "_sidecars", "*.parquet"))
	for _, p := range append(seeds, sidecars...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzCheckpoint {
			return
		}
		const path = "_delta_log/00000000000000000003.checkpoint.parquet"
		actions, err := decodeParquetCheckpoint(t.Context(), path, data)
		if err != nil {
			var cfe *CorruptFileError
			if !errors.As(err, &cfe) || cfe.Path != path {
				t.Fatalf("error %v is not a *CorruptFileError for %s", err, path)
			}
			if actions != nil {
				t.Fatalf("actions returned with error %v", err)
			}
			return
		}
		for _, a := range actions {
			if a.kind() == "" {
				t.Fatalf("decoded an empty action")
			}
		}
	})
}
