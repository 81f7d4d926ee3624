package deltalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// lastCheckpointPath is the pointer to a recent checkpoint, relative to the table root.
const lastCheckpointPath = "_delta_log/_last_checkpoint"

// LastCheckpoint is the content of _delta_log/_last_checkpoint: a hint to a recent
// checkpoint, which may be stale or point at a checkpoint that cleanup has deleted.
type LastCheckpoint struct {
	// Version is the table version the checkpoint captures.
	Version int64 `json:"version"`
	// Size is the number of actions (rows) in the checkpoint.
	Size int64 `json:"size"`
	// Parts is the number of files of a multi-part checkpoint; nil for a single file.
	Parts *int `json:"parts,omitempty"`
	// SizeInBytes is the total size of the checkpoint files.
	SizeInBytes *int64 `json:"sizeInBytes,omitempty"`
	// NumOfAddFiles counts the add actions in the checkpoint.
	NumOfAddFiles *int64 `json:"numOfAddFiles,omitempty"`
	// V2Checkpoint, written by Spark for v2 checkpoints, names the top-level file.
	V2Checkpoint *V2CheckpointInfo `json:"v2Checkpoint,omitempty"`
	// Checksum is the MD5 of the canonical form of the other fields (see
	// lastCheckpointChecksum). Readers verify it when present; writeLastCheckpoint sets it.
	Checksum string `json:"checksum,omitempty"`
}

// V2CheckpointInfo is the v2Checkpoint field of _last_checkpoint.
type V2CheckpointInfo struct {
	// Path is the file name of the top-level v2 checkpoint file in _delta_log.
	Path string `json:"path"`
	// SizeInBytes is the size of that file.
	SizeInBytes int64 `json:"sizeInBytes"`
	// ModificationTime is its modification time, ms since the epoch.
	ModificationTime int64 `json:"modificationTime"`
}

// readLastCheckpoint reads _last_checkpoint. It returns nil, nil when the file is absent,
// and a *CorruptFileError naming it when it cannot be used; callers then list the log.
func readLastCheckpoint(ctx context.Context, s Store) (*LastCheckpoint, error) {
	rc, err := s.Get(ctx, lastCheckpointPath)
	if errors.Is(err, ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", lastCheckpointPath, err)
	}
	var buf bytes.Buffer
	_, err = buf.ReadFrom(rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, &CorruptFileError{Path: lastCheckpointPath, Err: err}
	}
	lc, err := parseLastCheckpoint(buf.Bytes())
	if err != nil {
		return nil, &CorruptFileError{Path: lastCheckpointPath, Err: err}
	}
	return lc, nil
}

// parseLastCheckpoint decodes and sanity-checks _last_checkpoint; unknown fields
// (checkpointSchema, tags, ...) are ignored.
func parseLastCheckpoint(data []byte) (*LastCheckpoint, error) {
	var raw struct {
		LastCheckpoint
		Version *int64 `json:"version"`
		Size    *int64 `json:"size"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	if raw.Checksum != "" {
		sum, err := lastCheckpointChecksum(data)
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(sum, raw.Checksum) {
			return nil, fmt.Errorf("%w: has %s, content gives %s", errLastCheckpointChecksum, raw.Checksum, sum)
		}
	}
	switch {
	case raw.Version == nil:
		return nil, errors.New("deltalog: _last_checkpoint has no version")
	case *raw.Version < 0:
		return nil, fmt.Errorf("deltalog: _last_checkpoint has negative version %d", *raw.Version)
	case raw.Size != nil && *raw.Size < 0:
		return nil, fmt.Errorf("deltalog: _last_checkpoint has negative size %d", *raw.Size)
	case raw.LastCheckpoint.Parts != nil && *raw.LastCheckpoint.Parts < 1:
		return nil, fmt.Errorf("deltalog: _last_checkpoint has %d parts", *raw.LastCheckpoint.Parts)
	}
	lc := raw.LastCheckpoint
	lc.Version = *raw.Version
	if raw.Size != nil {
		lc.Size = *raw.Size
	}
	return &lc, nil
}

// writeLastCheckpoint overwrites _last_checkpoint, with its checksum. It is only a hint,
// so a plain Put after the checkpoint itself is complete is enough.
func writeLastCheckpoint(ctx context.Context, s Store, lc LastCheckpoint) error {
	data, err := encodeLastCheckpoint(lc)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", lastCheckpointPath, err)
	}
	if err := s.Put(ctx, lastCheckpointPath, data); err != nil {
		return fmt.Errorf("writing %s: %w", lastCheckpointPath, err)
	}
	return nil
}

// encodeLastCheckpoint marshals lc with its checksum computed over the other fields.
func encodeLastCheckpoint(lc LastCheckpoint) ([]byte, error) {
	lc.Checksum = ""
	data, err := MarshalPlain(lc)
	if err != nil {
		return nil, err
	}
	if lc.Checksum, err = lastCheckpointChecksum(data); err != nil {
		return nil, err
	}
	return MarshalPlain(lc)
}
