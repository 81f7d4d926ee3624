package deltalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// checkpointWriteBatch is how many rows are handed to the Parquet writer at once.
const checkpointWriteBatch = 1024

// propWriteStatsAsJSON turns the add.stats JSON column of checkpoints off when "false".
const propWriteStatsAsJSON = "delta.checkpoint.writeStatsAsJson"

// checkpointPath is the classic single-file checkpoint of a version.
func checkpointPath(version int64) string {
	return fmt.Sprintf("_delta_log/%020d.checkpoint.parquet", version)
}

// writeCheckpoint writes the classic single-file checkpoint of version and then points
// _last_checkpoint at it. state is the reconciled table state at version: one protocol,
// one metaData, txns, live adds, unexpired removes and domain metadata; commitInfo, cdc
// and v2-only actions in it are skipped, since checkpoints never hold them.
//
// Like Spark, it writes every add and remove with dataChange=false (a checkpoint changes
// no data) and removes without stats or tags. add.stats is written as the JSON string
// unless delta.checkpoint.writeStatsAsJson is "false" (the checkpoint then carries no
// stats). stats_parsed is never written, whatever delta.checkpoint.writeStatsAsStruct
// says: every reader must accept its absence and falls back to the JSON stats, and
// building it needs typed columns derived from the table schema.
//
// The file is built in memory and stored with one Put, so no reader sees it half written.
// _last_checkpoint is left alone if it already names a newer version.
func writeCheckpoint(ctx context.Context, s Store, version int64, state []Action) (LastCheckpoint, error) {
	data, lc, err := encodeCheckpoint(version, state)
	if err != nil {
		return LastCheckpoint{}, fmt.Errorf("writing checkpoint %d: %w", version, err)
	}
	path := checkpointPath(version)
	if err := s.Put(ctx, path, data); err != nil {
		return LastCheckpoint{}, fmt.Errorf("writing checkpoint %s: %w", path, err)
	}
	prev, err := readLastCheckpoint(ctx, s)
	// An unreadable _last_checkpoint is replaced: the new one is valid.
	if err == nil && prev != nil && prev.Version > version {
		return lc, nil
	}
	if err := writeLastCheckpoint(ctx, s, lc); err != nil {
		return LastCheckpoint{}, err
	}
	return lc, nil
}

// encodeCheckpoint builds the Parquet bytes of a classic checkpoint.
func encodeCheckpoint(version int64, state []Action) ([]byte, LastCheckpoint, error) {
	rows, opts, err := checkpointRowsOf(state)
	if err != nil {
		return nil, LastCheckpoint{}, err
	}
	data, err := encodeCheckpointRows(rows, opts, statsAsJSON(rows))
	if err != nil {
		return nil, LastCheckpoint{}, err
	}
	var numAdds int64
	for _, a := range rows {
		if a.Add != nil {
			numAdds++
		}
	}
	size := int64(len(data))
	return data, LastCheckpoint{
		Version:       version,
		Size:          int64(len(rows)),
		SizeInBytes:   &size,
		NumOfAddFiles: &numAdds,
	}, nil
}

// encodeCheckpointRows writes rows (protocol, metaData, add, remove, txn or
// domainMetadata actions) as a Parquet file of checkpointWriteSchema(opts).
func encodeCheckpointRows(rows []Action, opts checkpointSchemaOptions, withStats bool) ([]byte, error) {
	schema := checkpointWriteSchema(opts)
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, schema,
		parquet.Compression(&snappy.Codec{}),
		// Data page v1 is what Spark writes and what every reader handles.
		parquet.DataPageVersion(1),
		parquet.CreatedBy("cdc2delta", "", ""),
	)
	e := newCheckpointRowEncoder(layoutOf(schema), withStats)
	batch := make([]parquet.Row, 0, checkpointWriteBatch)
	for _, a := range rows {
		row, err := e.encode(a)
		if err != nil {
			return nil, err
		}
		batch = append(batch, row)
		if len(batch) == cap(batch) {
			if _, err := w.WriteRows(batch); err != nil {
				return nil, fmt.Errorf("encoding checkpoint rows: %w", err)
			}
			batch = batch[:0]
		}
	}
	if _, err := w.WriteRows(batch); err != nil {
		return nil, fmt.Errorf("encoding checkpoint rows: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encoding checkpoint: %w", err)
	}
	return buf.Bytes(), nil
}

// checkpointRowsOf orders the state for writing (protocol and metaData first, then the
// rest as given) and picks the optional columns it needs.
func checkpointRowsOf(state []Action) ([]Action, checkpointSchemaOptions, error) {
	var opts checkpointSchemaOptions
	rows := make([]Action, 2, 2+len(state))
	for _, a := range state {
		switch {
		case a.Protocol != nil:
			if rows[0].Protocol != nil {
				return nil, opts, errors.New("deltalog: checkpoint state has two protocol actions")
			}
			rows[0] = a
		case a.Metadata != nil:
			if rows[1].Metadata != nil {
				return nil, opts, errors.New("deltalog: checkpoint state has two metaData actions")
			}
			rows[1] = a
		case a.Add != nil:
			opts.clusteringProvider = opts.clusteringProvider || a.Add.ClusteringProvider != ""
			rows = append(rows, a)
		case a.DomainMetadata != nil:
			opts.domainMetadata = true
			rows = append(rows, a)
		case a.Remove != nil, a.Txn != nil:
			rows = append(rows, a)
		}
	}
	if rows[0].Protocol == nil || rows[1].Metadata == nil {
		return nil, opts, errors.New("deltalog: checkpoint state needs a protocol and a metaData action")
	}
	return rows, opts, nil
}

// statsAsJSON reports whether add.stats is written; rows[1] is the metaData action.
func statsAsJSON(rows []Action) bool {
	return rows[1].Metadata.Configuration[propWriteStatsAsJSON] != "false"
}

// checkpointRowEncoder turns actions into Parquet rows of checkpointWriteSchema, setting
// definition and repetition levels itself: every leaf column gets at least one value.
type checkpointRowEncoder struct {
	root      *colNode
	cols      [][]parquet.Value
	withStats bool
}

func newCheckpointRowEncoder(root *colNode, withStats bool) *checkpointRowEncoder {
	return &checkpointRowEncoder{root: root, cols: make([][]parquet.Value, root.end), withStats: withStats}
}

func (e *checkpointRowEncoder) encode(a Action) (parquet.Row, error) {
	for i := range e.cols {
		e.cols[i] = e.cols[i][:0]
	}
	var active string
	switch {
	case a.Protocol != nil:
		active = colProtocol
		e.protocol(e.root.child(colProtocol), a.Protocol)
	case a.Metadata != nil:
		active = colMetadata
		e.metadata(e.root.child(colMetadata), a.Metadata)
	case a.Add != nil:
		active = colAdd
		e.add(e.root.child(colAdd), a.Add)
	case a.Remove != nil:
		active = colRemove
		e.remove(e.root.child(colRemove), a.Remove)
	case a.Txn != nil:
		active = colTxn
		n := e.root.child(colTxn)
		e.str(n.child("appId"), a.Txn.AppID)
		e.int64(n.child("version"), a.Txn.Version)
		e.int64Ptr(n.child("lastUpdated"), a.Txn.LastUpdated)
	case a.DomainMetadata != nil:
		active = colDomainMetadata
		n := e.root.child(colDomainMetadata)
		e.str(n.child("domain"), a.DomainMetadata.Domain)
		e.str(n.child("configuration"), a.DomainMetadata.Configuration)
		e.boolean(n.child("removed"), a.DomainMetadata.Removed)
	}
	for _, c := range e.root.children {
		if c.name != active {
			e.null(c)
		}
	}
	size := 0
	for i, vs := range e.cols {
		if len(vs) == 0 {
			// A bug in this encoder, not bad input: the schema and encoder disagree.
			return nil, fmt.Errorf("deltalog: checkpoint encoder left column %d empty", i)
		}
		size += len(vs)
	}
	row := make(parquet.Row, 0, size)
	for _, vs := range e.cols {
		row = append(row, vs...)
	}
	return row, nil
}

func (e *checkpointRowEncoder) protocol(n *colNode, p *Protocol) {
	e.int32(n.child("minReaderVersion"), int32(p.MinReaderVersion))
	e.int32(n.child("minWriterVersion"), int32(p.MinWriterVersion))
	// Feature lists must be present (maybe empty) at reader 3 / writer 7, null otherwise.
	e.list(n.child("readerFeatures"), p.ReaderFeatures, p.ReaderFeatures != nil || p.MinReaderVersion >= 3)
	e.list(n.child("writerFeatures"), p.WriterFeatures, p.WriterFeatures != nil || p.MinWriterVersion >= 7)
}

func (e *checkpointRowEncoder) metadata(n *colNode, m *Metadata) {
	e.str(n.child("id"), m.ID)
	e.optStr(n.child("name"), m.Name)
	e.optStr(n.child("description"), m.Description)
	f := n.child("format")
	provider := m.Format.Provider
	if provider == "" {
		provider = "parquet"
	}
	e.str(f.child("provider"), provider)
	e.stringMap(f.child("options"), m.Format.Options)
	e.str(n.child("schemaString"), m.SchemaString)
	e.list(n.child("partitionColumns"), m.PartitionColumns, true)
	e.stringMap(n.child("configuration"), m.Configuration)
	e.int64Ptr(n.child("createdTime"), m.CreatedTime)
}

func (e *checkpointRowEncoder) add(n *colNode, a *Add) {
	e.str(n.child("path"), a.Path)
	e.nullableMap(n.child("partitionValues"), a.PartitionValues, true)
	e.int64(n.child("size"), a.Size)
	e.int64(n.child("modificationTime"), a.ModificationTime)
	e.boolean(n.child("dataChange"), false)
	if e.withStats {
		e.optStr(n.child("stats"), a.Stats)
	} else {
		e.null(n.child("stats"))
	}
	e.tags(n.child("tags"), a.Tags)
	e.dv(n.child("deletionVector"), a.DeletionVector)
	e.int64Ptr(n.child("baseRowId"), a.BaseRowID)
	e.int64Ptr(n.child("defaultRowCommitVersion"), a.DefaultRowCommitVersion)
	if c := n.child("clusteringProvider"); c != nil {
		e.optStr(c, a.ClusteringProvider)
	}
}

func (e *checkpointRowEncoder) remove(n *colNode, r *Remove) {
	e.str(n.child("path"), r.Path)
	e.int64Ptr(n.child("deletionTimestamp"), r.DeletionTimestamp)
	e.boolean(n.child("dataChange"), false)
	e.boolean(n.child("extendedFileMetadata"), r.ExtendedFileMetadata)
	e.nullableMap(n.child("partitionValues"), r.PartitionValues, r.PartitionValues != nil)
	e.int64Ptr(n.child("size"), r.Size)
	e.dv(n.child("deletionVector"), r.DeletionVector)
	e.int64Ptr(n.child("baseRowId"), r.BaseRowID)
	e.int64Ptr(n.child("defaultRowCommitVersion"), r.DefaultRowCommitVersion)
}

func (e *checkpointRowEncoder) dv(n *colNode, dv *DeletionVector) {
	if dv == nil {
		e.null(n)
		return
	}
	e.str(n.child("storageType"), dv.StorageType)
	e.str(n.child("pathOrInlineDv"), dv.PathOrInlineDV)
	if dv.Offset != nil {
		e.int32(n.child("offset"), *dv.Offset)
	} else {
		e.null(n.child("offset"))
	}
	e.int32(n.child("sizeInBytes"), dv.SizeInBytes)
	e.int64(n.child("cardinality"), dv.Cardinality)
	e.int64Ptr(n.child("maxRowIndex"), dv.MaxRowIndex)
}

// null marks an optional node (and so every leaf below it) null in its parent.
func (e *checkpointRowEncoder) null(n *colNode) { e.nullAt(n, 0, n.def-1) }

func (e *checkpointRowEncoder) nullAt(n *colNode, rep, def int) {
	for c := n.first; c < n.end; c++ {
		e.cols[c] = append(e.cols[c], parquet.Value{}.Level(rep, def, c))
	}
}

func (e *checkpointRowEncoder) put(n *colNode, v parquet.Value) {
	e.cols[n.first] = append(e.cols[n.first], v.Level(0, n.def, n.first))
}

func (e *checkpointRowEncoder) str(n *colNode, s string) {
	e.put(n, parquet.ByteArrayValue([]byte(s)))
}

// optStr writes "" as null: Spark leaves unset optional strings null.
func (e *checkpointRowEncoder) optStr(n *colNode, s string) {
	if s == "" {
		e.null(n)
		return
	}
	e.str(n, s)
}

func (e *checkpointRowEncoder) int64(n *colNode, v int64) { e.put(n, parquet.Int64Value(v)) }
func (e *checkpointRowEncoder) int32(n *colNode, v int32) { e.put(n, parquet.Int32Value(v)) }
func (e *checkpointRowEncoder) boolean(n *colNode, v bool) {
	e.put(n, parquet.BooleanValue(v))
}

func (e *checkpointRowEncoder) int64Ptr(n *colNode, v *int64) {
	if v == nil {
		e.null(n)
		return
	}
	e.int64(n, *v)
}

func (e *checkpointRowEncoder) tags(n *colNode, m map[string]string) {
	if m == nil {
		e.null(n)
		return
	}
	nm := make(map[string]*string, len(m))
	for k, v := range m {
		nm[k] = &v
	}
	e.nullableMap(n, nm, true)
}

func (e *checkpointRowEncoder) stringMap(n *colNode, m map[string]string) {
	nm := make(map[string]*string, len(m))
	for k, v := range m {
		nm[k] = &v
	}
	e.nullableMap(n, nm, true)
}

// nullableMap writes a MAP<string,string> with entries in key order; present=false writes
// a null map, and a present map without entries is written empty.
func (e *checkpointRowEncoder) nullableMap(n *colNode, m map[string]*string, present bool) {
	if !present {
		e.null(n)
		return
	}
	kv := n.children[0]
	key, val := kv.child("key"), kv.child("value")
	if len(m) == 0 {
		e.nullAt(kv, 0, n.def)
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		rep := 0
		if i > 0 {
			rep = kv.rep
		}
		e.cols[key.first] = append(e.cols[key.first], parquet.ByteArrayValue([]byte(k)).Level(rep, key.def, key.first))
		if v := m[k]; v != nil {
			e.cols[val.first] = append(e.cols[val.first], parquet.ByteArrayValue([]byte(*v)).Level(rep, val.def, val.first))
		} else {
			e.cols[val.first] = append(e.cols[val.first], parquet.Value{}.Level(rep, kv.def, val.first))
		}
	}
}

// list writes a LIST<string>; present=false writes null.
func (e *checkpointRowEncoder) list(n *colNode, l []string, present bool) {
	if !present {
		e.null(n)
		return
	}
	rep := n.children[0]
	elem := rep.children[0]
	if len(l) == 0 {
		e.nullAt(rep, 0, n.def)
		return
	}
	for i, s := range l {
		r := 0
		if i > 0 {
			r = rep.rep
		}
		e.cols[elem.first] = append(e.cols[elem.first], parquet.ByteArrayValue([]byte(s)).Level(r, elem.def, elem.first))
	}
}
