package tableops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/cdc2delta/cdc2delta/deltalog"
)

// Operation names of ALTER TABLE's property commits, as Spark records them.
const (
	opSetTblProps   = deltalog.OpSetTblProps
	opUnsetTblProps = "UNSET TBLPROPERTIES"
)

// ErrNoChange means an ALTER that would leave the table's properties as they are.
var ErrNoChange = errors.New("tableops: the table already has these properties")

// AlterOptions configure [Alter]: either Set or Unset, as Spark's SET and UNSET
// TBLPROPERTIES are separate statements.
type AlterOptions struct {
	Set   map[string]string
	Unset []string
	// UpgradeProtocol allows the commit to raise the table's protocol when a property
	// needs it (column mapping, deletion vectors, change data feed, append-only): readers
	// and writers on an older Delta then lose access, so it is asked for, never implied.
	UpgradeProtocol bool
}

// ProtocolUpgradeError refuses an ALTER whose properties need a higher protocol than
// the table's without AlterOptions.UpgradeProtocol.
type ProtocolUpgradeError struct {
	From, To deltalog.Protocol
}

func (e *ProtocolUpgradeError) Error() string {
	return fmt.Sprintf("tableops: the properties need protocol %s, the table has %s: "+
		"readers and writers of the table on an older Delta would lose access, so the upgrade is asked for explicitly",
		ProtocolString(e.To), ProtocolString(e.From))
}

// ProtocolString renders a protocol as its versions and features.
func ProtocolString(p deltalog.Protocol) string {
	s := fmt.Sprintf("reader %d / writer %d", p.MinReaderVersion, p.MinWriterVersion)
	if len(p.ReaderFeatures) > 0 || len(p.WriterFeatures) > 0 {
		s += fmt.Sprintf(" (reader features %v, writer features %v)", p.ReaderFeatures, p.WriterFeatures)
	}
	return s
}

// AlterResult is what an ALTER committed.
type AlterResult struct {
	Version int64
	// Protocol is the table's protocol after the commit; Upgraded says it changed.
	Protocol deltalog.Protocol
	Upgraded bool
	// MappedColumns counts the fields given column mapping ids when column mapping was
	// enabled (their physical names are their names, which the data files use).
	MappedColumns int
}

// Alter commits table properties as ALTER TABLE SET / UNSET TBLPROPERTIES does: one
// metadata action (and a protocol action when a property needs more and the caller
// allowed it), recorded under Spark's operation name with the properties as its
// parameter. Setting delta.columnMapping.mode to name on a table without column mapping
// maps every existing column to its own name; turning column mapping off is refused.
func Alter(ctx context.Context, t *deltalog.Table, snap *deltalog.Snapshot, opts AlterOptions) (AlterResult, error) {
	if (len(opts.Set) == 0) == (len(opts.Unset) == 0) {
		return AlterResult{}, errors.New("tableops: alter sets or unsets properties, one of the two")
	}
	meta := snap.Metadata()
	conf := maps.Clone(meta.Configuration)
	if conf == nil {
		conf = map[string]string{}
	}
	wasMapped := deltalog.ColumnMappingMode(&meta) != "none"
	var op deltalog.Operation
	if len(opts.Set) > 0 {
		set := map[string]string{}
		for k, v := range opts.Set {
			canon, err := deltalog.CheckProperty(k, v)
			if err != nil {
				return AlterResult{}, err
			}
			if canon == deltalog.PropColumnMappingMode {
				v = strings.ToLower(strings.TrimSpace(v))
			}
			set[canon] = v
		}
		ps, _ := json.Marshal(set) // a map of strings: cannot fail
		op = deltalog.Operation{Name: opSetTblProps, Parameters: map[string]string{"properties": string(ps)}}
		maps.Copy(conf, set)
	} else {
		var keys []string
		for _, k := range opts.Unset {
			canon := k
			for have := range conf {
				if strings.EqualFold(have, k) && strings.HasPrefix(strings.ToLower(k), "delta.") {
					canon = have
				}
			}
			if _, ok := conf[canon]; !ok {
				return AlterResult{}, &deltalog.PropertyError{Key: k, Reason: "the table does not have it"}
			}
			if canon == deltalog.PropColumnMappingMode || canon == deltalog.PropColumnMappingMaxID {
				return AlterResult{}, &deltalog.PropertyError{Key: k, Value: conf[canon], Reason: "column mapping cannot be turned off on a table"}
			}
			delete(conf, canon)
			keys = append(keys, canon)
		}
		ks, _ := json.Marshal(keys)
		op = deltalog.Operation{Name: opUnsetTblProps, Parameters: map[string]string{"properties": string(ks), "ifExists": "false"}}
	}
	if maps.Equal(conf, meta.Configuration) {
		return AlterResult{}, ErrNoChange
	}
	res := AlterResult{Protocol: snap.Protocol()}
	schema := snap.Schema()
	nowMapped := deltalog.ColumnMappingMode(&deltalog.Metadata{Configuration: conf}) != "none"
	switch {
	case wasMapped && !nowMapped:
		return AlterResult{}, &deltalog.PropertyError{Key: deltalog.PropColumnMappingMode, Value: conf[deltalog.PropColumnMappingMode],
			Reason: "column mapping cannot be turned off on a table"}
	case !wasMapped && nowMapped:
		var maxID int64
		schema, maxID = deltalog.MapColumnsAsNamed(schema, deltalog.MaxColumnID(conf))
		conf[deltalog.PropColumnMappingMaxID] = fmt.Sprint(maxID)
		res.MappedColumns = int(maxID - deltalog.MaxColumnID(meta.Configuration))
		ss, err := schema.SchemaString()
		if err != nil {
			return AlterResult{}, err
		}
		meta.SchemaString = ss
	}
	meta.Configuration = conf
	actions := []deltalog.Action{{Metadata: &meta}}
	cur := snap.Protocol()
	if p := deltalog.UpgradeProtocol(cur, deltalog.MinimalProtocol(schema, conf)); !p.Equal(cur) {
		if !opts.UpgradeProtocol {
			return AlterResult{}, &ProtocolUpgradeError{From: cur, To: p}
		}
		actions = append(actions, deltalog.Action{Protocol: &p})
		res.Protocol, res.Upgraded = p, true
	}
	c, err := t.Commit(ctx, snap, actions, op, deltalog.ReadWholeTable())
	if err != nil {
		return AlterResult{}, fmt.Errorf("committing %s: %w", op.Name, err)
	}
	res.Version = c.Version
	return res, nil
}
