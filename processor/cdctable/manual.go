package cdctable

import (
	"context"
	"fmt"
	"time"

	"github.com/cdc2delta/cdc2delta/codecs"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// ManualEdits are the rules a manual UPDATE or DELETE (cdc2delta update, delete;
// internal/tableops) follows on a table the processor maintains, so that the source
// stays the truth (ADR 0028):
//
//   - key columns and the _cdc_* columns cannot be set: an UPDATE keeps each row's
//     _cdc_position, so the next newer source change of the key overwrites it;
//   - a DELETE remembers each deleted key at its stored position, as a source delete
//     does (ADR 0022), so that a re-delivered older event cannot resurrect it while
//     the tombstone lasts.
type ManualEdits struct {
	layout Layout
	store  deltalog.Store
	now    func() time.Time
}

// ManualEditsFor returns the rules for the table of meta, stored in store, or an error
// matching ErrNotCDCTable for a table the processor does not maintain. now stamps the
// tombstones (their retention counts from it); nil means time.Now.
func ManualEditsFor(meta deltalog.Metadata, store deltalog.Store, now func() time.Time) (*ManualEdits, error) {
	l, err := LayoutOf(meta)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &ManualEdits{layout: l, store: store, now: now}, nil
}

// Protected maps the columns an UPDATE cannot set to the reason.
func (m *ManualEdits) Protected() map[string]string {
	out := map[string]string{}
	for _, k := range m.layout.KeyNames {
		out[k] = "it is a key column of the source table (" + PropKeyColumns + "); change the key at the source, or DELETE the row"
	}
	for _, c := range []string{ColPosition, ColOp, ColCommitTime, ColDeleted} {
		out[c] = "cdc2delta records the source change of the row there; a manual UPDATE keeps it so that newer source changes still apply"
	}
	return out
}

// RecordDeletes writes the tombstones of the rows (aligned with the table's schema) a
// DELETE commits as version: each key at its stored _cdc_position. The file counts
// once commit version names it, so the commitInfo fields returned must go into that
// commit, which must land at exactly that version (deltalog.ExactVersion): the
// processor judges tombstone files by that rule (ADR 0022). Its signature is
// tableops.DMLOptions.OnDelete's.
func (m *ManualEdits) RecordDeletes(ctx context.Context, version int64, rows [][]any) (map[string]string, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	keys := make(map[string]codecs.Position, len(rows))
	var buf []byte
	for _, r := range rows {
		var err error
		if buf, err = m.layout.AppendRowKey(buf[:0], r); err != nil {
			return nil, err
		}
		hex, _ := r[m.layout.PosField].(string)
		pos, err := codecs.PositionFromHex(hex)
		if err != nil {
			return nil, fmt.Errorf("a deleted row has a bad %s %q: %w", ColPosition, hex, err)
		}
		if old, ok := keys[string(buf)]; ok && old.Compare(pos) >= 0 {
			continue
		}
		keys[string(buf)] = pos
	}
	at := m.now().UnixMilli()
	var data []byte
	for k, pos := range keys {
		data = AppendTombstoneLine(data, k, pos, at, false)
	}
	name := BatchTombstoneName(version)
	if err := m.store.PutIfAbsent(ctx, TombstoneDir+name, data); err != nil {
		return nil, fmt.Errorf("writing tombstones %s: %w", TombstoneDir+name, err)
	}
	return map[string]string{TombstonesField: name}, nil
}
