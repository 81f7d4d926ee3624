package deltalog

import (
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go"
)

// errNoActionColumns marks a Parquet file that has none of the checkpoint action columns.
var errNoActionColumns = errors.New("deltalog: parquet file has no checkpoint action columns")

// checkpointDecoder turns the rows of one checkpoint file into actions. It is compiled
// from the file's own schema, so it finds columns by name wherever they are, treats absent
// optional columns as null and accepts INT32 where Spark writes INT64 (and the reverse).
type checkpointDecoder struct {
	numCols int
	// schema, when set, is a projection of the file schema that rows are converted to.
	schema *parquet.Schema
	// wantParsed records an add with neither stats JSON nor partitionValues map, which
	// the _parsed columns left out of a projection might supply.
	wantParsed bool

	txn struct {
		present              groupRef
		appID, version, last leafRef
	}
	add struct {
		present                             groupRef
		path, size, modTime, dataChange     leafRef
		stats, baseRowID, defaultRowVersion leafRef
		clusteringProvider                  leafRef
		partitionValues, tags               mapRef
		dv                                  dvRefs
		statsParsed                         *parsedNode
		partitionValuesParsed               *parsedNode
	}
	remove struct {
		present                                   groupRef
		path, deletionTimestamp, dataChange, size leafRef
		extended, stats, baseRowID, defaultRowVer leafRef
		partitionValues, tags                     mapRef
		dv                                        dvRefs
	}
	metadata struct {
		present                   groupRef
		id, name, description     leafRef
		schemaString, createdTime leafRef
		provider                  leafRef
		options, configuration    mapRef
		partitionColumns          listRef
	}
	protocol struct {
		present                        groupRef
		minReader, minWriter           leafRef
		readerFeatures, writerFeatures listRef
	}
	domain struct {
		present                        groupRef
		domain, configuration, removed leafRef
	}
	checkpointMetadata struct {
		present groupRef
		version leafRef
		tags    mapRef
	}
	sidecar struct {
		present                    groupRef
		path, sizeInBytes, modTime leafRef
		tags                       mapRef
	}
}

// dvRefs are the columns of a deletionVector struct.
type dvRefs struct {
	present                                 groupRef
	storageType, pathOrInline, offset, size leafRef
	cardinality, maxRowIndex                leafRef
}

// newCheckpointDecoder resolves the checkpoint columns in a file's schema.
func newCheckpointDecoder(root *colNode) (*checkpointDecoder, error) {
	var r ckptResolver
	d := &checkpointDecoder{numCols: root.end}
	found := false
	seen := func(n *colNode) *colNode {
		if n != nil {
			found = true
		}
		return n
	}

	{
		n := seen(root.child(colTxn))
		d.txn.present = r.group(n)
		d.txn.appID = r.str(n.child("appId"))
		d.txn.version = r.int(n.child("version"))
		d.txn.last = r.int(n.child("lastUpdated"))
	}
	{
		n := seen(root.child(colAdd))
		a := &d.add
		a.present = r.group(n)
		a.path = r.str(n.child("path"))
		a.partitionValues = r.stringMap(n.child("partitionValues"))
		a.size = r.int(n.child("size"))
		a.modTime = r.int(n.child("modificationTime"))
		a.dataChange = r.boolean(n.child("dataChange"))
		a.stats = r.str(n.child("stats"))
		a.tags = r.stringMap(n.child("tags"))
		a.dv = r.dv(n.child("deletionVector"))
		a.baseRowID = r.int(n.child("baseRowId"))
		a.defaultRowVersion = r.int(n.child("defaultRowCommitVersion"))
		a.clusteringProvider = r.str(n.child("clusteringProvider"))
		a.statsParsed = compileParsed(n.child("stats_parsed"))
		a.partitionValuesParsed = compileParsed(n.child("partitionValues_parsed"))
	}
	{
		n := seen(root.child(colRemove))
		m := &d.remove
		m.present = r.group(n)
		m.path = r.str(n.child("path"))
		m.deletionTimestamp = r.int(n.child("deletionTimestamp"))
		m.dataChange = r.boolean(n.child("dataChange"))
		m.extended = r.boolean(n.child("extendedFileMetadata"))
		m.partitionValues = r.stringMap(n.child("partitionValues"))
		m.size = r.int(n.child("size"))
		m.stats = r.str(n.child("stats"))
		m.tags = r.stringMap(n.child("tags"))
		m.dv = r.dv(n.child("deletionVector"))
		m.baseRowID = r.int(n.child("baseRowId"))
		m.defaultRowVer = r.int(n.child("defaultRowCommitVersion"))
	}
	{
		n := seen(root.child(colMetadata))
		m := &d.metadata
		m.present = r.group(n)
		m.id = r.str(n.child("id"))
		m.name = r.str(n.child("name"))
		m.description = r.str(n.child("description"))
		m.provider = r.str(n.at("format", "provider"))
		m.options = r.stringMap(n.at("format", "options"))
		m.schemaString = r.str(n.child("schemaString"))
		m.partitionColumns = r.stringList(n.child("partitionColumns"))
		m.configuration = r.stringMap(n.child("configuration"))
		m.createdTime = r.int(n.child("createdTime"))
	}
	{
		n := seen(root.child(colProtocol))
		p := &d.protocol
		p.present = r.group(n)
		p.minReader = r.int(n.child("minReaderVersion"))
		p.minWriter = r.int(n.child("minWriterVersion"))
		p.readerFeatures = r.stringList(n.child("readerFeatures"))
		p.writerFeatures = r.stringList(n.child("writerFeatures"))
	}
	{
		n := seen(root.child(colDomainMetadata))
		m := &d.domain
		m.present = r.group(n)
		m.domain = r.str(n.child("domain"))
		m.configuration = r.str(n.child("configuration"))
		m.removed = r.boolean(n.child("removed"))
	}
	{
		n := seen(root.child(colCheckpointMetadata))
		m := &d.checkpointMetadata
		m.present = r.group(n)
		m.version = r.int(n.child("version"))
		m.tags = r.stringMap(n.child("tags"))
	}
	{
		n := seen(root.child(colSidecar))
		s := &d.sidecar
		s.present = r.group(n)
		s.path = r.str(n.child("path"))
		s.sizeInBytes = r.int(n.child("sizeInBytes"))
		s.modTime = r.int(n.child("modificationTime"))
		s.tags = r.stringMap(n.child("tags"))
	}
	if r.err != nil {
		return nil, r.err
	}
	if !found {
		return nil, errNoActionColumns
	}
	return d, nil
}

func (r *ckptResolver) dv(n *colNode) dvRefs {
	return dvRefs{
		present:      r.group(n),
		storageType:  r.str(n.child("storageType")),
		pathOrInline: r.str(n.child("pathOrInlineDv")),
		offset:       r.int(n.child("offset")),
		size:         r.int(n.child("sizeInBytes")),
		cardinality:  r.int(n.child("cardinality")),
		maxRowIndex:  r.int(n.child("maxRowIndex")),
	}
}

func (d dvRefs) read(rc rowCols) *DeletionVector {
	if !d.present.present(rc) {
		return nil
	}
	dv := &DeletionVector{MaxRowIndex: d.maxRowIndex.int64Ptr(rc)}
	dv.StorageType, _ = d.storageType.str(rc)
	dv.PathOrInlineDV, _ = d.pathOrInline.str(rc)
	if off, ok := d.offset.int64(rc); ok {
		o := int32(off)
		dv.Offset = &o
	}
	size, _ := d.size.int64(rc)
	dv.SizeInBytes = int32(size)
	dv.Cardinality, _ = d.cardinality.int64(rc)
	return dv
}

// decode returns the action a row holds; ok is false for a row with no known action.
// Spark writes exactly one action per row; should a row hold several, the first in the
// order below wins.
func (d *checkpointDecoder) decode(rc rowCols) (a Action, ok bool, err error) {
	switch {
	case d.add.present.present(rc):
		add, err := d.decodeAdd(rc)
		return Action{Add: add}, err == nil, err
	case d.remove.present.present(rc):
		rm, err := d.decodeRemove(rc)
		return Action{Remove: rm}, err == nil, err
	case d.txn.present.present(rc):
		t := &d.txn
		app, ok := t.appID.str(rc)
		if !ok {
			return Action{}, false, errors.New("txn without appId")
		}
		v, _ := t.version.int64(rc)
		return Action{Txn: &Txn{AppID: app, Version: v, LastUpdated: t.last.int64Ptr(rc)}}, true, nil
	case d.metadata.present.present(rc):
		return Action{Metadata: d.decodeMetadata(rc)}, true, nil
	case d.protocol.present.present(rc):
		p := &d.protocol
		r, _ := p.minReader.int64(rc)
		w, _ := p.minWriter.int64(rc)
		return Action{Protocol: &Protocol{
			MinReaderVersion: int(r),
			MinWriterVersion: int(w),
			ReaderFeatures:   p.readerFeatures.strings(rc),
			WriterFeatures:   p.writerFeatures.strings(rc),
		}}, true, nil
	case d.domain.present.present(rc):
		m := &d.domain
		name, ok := m.domain.str(rc)
		if !ok {
			return Action{}, false, errors.New("domainMetadata without domain")
		}
		conf, _ := m.configuration.str(rc)
		return Action{DomainMetadata: &DomainMetadata{Domain: name, Configuration: conf, Removed: m.removed.boolean(rc)}}, true, nil
	case d.checkpointMetadata.present.present(rc):
		m := &d.checkpointMetadata
		v, _ := m.version.int64(rc)
		return Action{CheckpointMetadata: &CheckpointMetadata{Version: v, Tags: m.tags.strings(rc)}}, true, nil
	case d.sidecar.present.present(rc):
		s := &d.sidecar
		p, ok := s.path.str(rc)
		if !ok {
			return Action{}, false, errors.New("sidecar without path")
		}
		size, _ := s.sizeInBytes.int64(rc)
		mt, _ := s.modTime.int64(rc)
		return Action{Sidecar: &Sidecar{Path: p, SizeInBytes: size, ModificationTime: mt, Tags: s.tags.strings(rc)}}, true, nil
	}
	return Action{}, false, nil
}

func (d *checkpointDecoder) decodeAdd(rc rowCols) (*Add, error) {
	a := &d.add
	path, ok := a.path.str(rc)
	if !ok {
		return nil, errors.New("add without path")
	}
	add := &Add{
		Path:                    path,
		DataChange:              a.dataChange.boolean(rc),
		Tags:                    a.tags.strings(rc),
		DeletionVector:          a.dv.read(rc),
		BaseRowID:               a.baseRowID.int64Ptr(rc),
		DefaultRowCommitVersion: a.defaultRowVersion.int64Ptr(rc),
	}
	add.Size, _ = a.size.int64(rc)
	add.ModificationTime, _ = a.modTime.int64(rc)
	add.ClusteringProvider, _ = a.clusteringProvider.str(rc)
	pv, ok := a.partitionValues.nullable(rc)
	if !ok {
		d.wantParsed = true
		if a.partitionValuesParsed != nil {
			var err error
			if pv, err = a.partitionValuesParsed.partitionValues(rc); err != nil {
				return nil, fmt.Errorf("add %s: %w", path, err)
			}
		}
	}
	if pv == nil {
		pv = map[string]*string{}
	}
	add.PartitionValues = pv
	if s, ok := a.stats.str(rc); ok {
		add.Stats = s
		return add, nil
	}
	d.wantParsed = true
	if a.statsParsed != nil && a.statsParsed.present.present(rc) {
		s, err := a.statsParsed.statsJSON(rc)
		if err != nil {
			return nil, fmt.Errorf("add %s: stats_parsed: %w", path, err)
		}
		add.Stats = s
	}
	return add, nil
}

func (d *checkpointDecoder) decodeRemove(rc rowCols) (*Remove, error) {
	m := &d.remove
	path, ok := m.path.str(rc)
	if !ok {
		return nil, errors.New("remove without path")
	}
	rm := &Remove{
		Path:                    path,
		DeletionTimestamp:       m.deletionTimestamp.int64Ptr(rc),
		DataChange:              m.dataChange.boolean(rc),
		ExtendedFileMetadata:    m.extended.boolean(rc),
		Size:                    m.size.int64Ptr(rc),
		Tags:                    m.tags.strings(rc),
		DeletionVector:          m.dv.read(rc),
		BaseRowID:               m.baseRowID.int64Ptr(rc),
		DefaultRowCommitVersion: m.defaultRowVer.int64Ptr(rc),
	}
	rm.Stats, _ = m.stats.str(rc)
	if pv, ok := m.partitionValues.nullable(rc); ok {
		rm.PartitionValues = pv
	}
	return rm, nil
}

func (d *checkpointDecoder) decodeMetadata(rc rowCols) *Metadata {
	m := &d.metadata
	md := &Metadata{
		CreatedTime:      m.createdTime.int64Ptr(rc),
		PartitionColumns: m.partitionColumns.strings(rc),
		Configuration:    m.configuration.strings(rc),
	}
	md.ID, _ = m.id.str(rc)
	md.Name, _ = m.name.str(rc)
	md.Description, _ = m.description.str(rc)
	md.SchemaString, _ = m.schemaString.str(rc)
	md.Format.Provider, _ = m.provider.str(rc)
	md.Format.Options = m.options.strings(rc)
	// The protocol requires these three; normalise null to empty so JSON re-encoding
	// writes [] and {} as Spark does.
	if md.Format.Options == nil {
		md.Format.Options = map[string]string{}
	}
	if md.PartitionColumns == nil {
		md.PartitionColumns = []string{}
	}
	if md.Configuration == nil {
		md.Configuration = map[string]string{}
	}
	return md
}
