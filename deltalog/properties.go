package deltalog

import (
	"fmt"
	"strconv"
	"strings"
)

// PropertyError refuses a table property as ALTER TABLE SET TBLPROPERTIES would: an
// unknown delta.* key, a value Delta does not parse, or a key only Delta itself sets.
type PropertyError struct {
	Key, Value string
	Reason     string
}

func (e *PropertyError) Error() string {
	return fmt.Sprintf("deltalog: table property %s=%q: %s", e.Key, e.Value, e.Reason)
}

// propertyKind says how a known delta.* property's value is checked.
type propertyKind int

const (
	propBool propertyKind = iota
	propInterval
	propPositiveInt
	propIndexedCols // an integer >= -1 (-1: every column)
	propText
	propMappingMode
	propIsolation
	propInternal    // set by Delta itself: refused
	propUnsupported // would enable a feature this package does not write
)

// knownProperties are the delta.* table properties Spark's DeltaConfigs defines that a
// user may set, by canonical name.
var knownProperties = map[string]propertyKind{
	PropAppendOnly:                                      propBool,
	PropCheckpointInterval:                              propPositiveInt,
	PropLogRetentionDuration:                            propInterval,
	PropDeletedFileRetention:                            propInterval,
	PropSetTxnRetentionDuration:                         propInterval,
	PropEnableExpiredLogCleanup:                         propBool,
	PropEnableChangeDataFeed:                            propBool,
	PropEnableDeletionVectors:                           propBool,
	PropColumnMappingMode:                               propMappingMode,
	"delta.dataSkippingNumIndexedCols":                  propIndexedCols,
	"delta.dataSkippingStatsColumns":                    propText,
	"delta.checkpoint.writeStatsAsJson":                 propBool,
	"delta.checkpoint.writeStatsAsStruct":               propBool,
	"delta.randomizeFilePrefixes":                       propBool,
	"delta.randomPrefixLength":                          propPositiveInt,
	"delta.isolationLevel":                              propIsolation,
	"delta.targetFileSize":                              propText,
	"delta.tuneFileSizesForRewrites":                    propBool,
	"delta.autoOptimize.optimizeWrite":                  propBool,
	"delta.autoOptimize.autoCompact":                    propText,
	"delta.compatibility.symlinkFormatManifest.enabled": propBool,
	PropColumnMappingMaxID:                              propInternal,
	PropICTEnablementVersion:                            propInternal,
	PropICTEnablementTimestamp:                          propInternal,
	"delta.minReaderVersion":                            propInternal,
	"delta.minWriterVersion":                            propInternal,
	PropEnableInCommitTimestamps:                        propUnsupported,
	"delta.enableRowTracking":                           propUnsupported,
	"delta.enableTypeWidening":                          propUnsupported,
	"delta.checkpointPolicy":                            propUnsupported,
	"delta.enableIcebergCompatV1":                       propUnsupported,
	"delta.enableIcebergCompatV2":                       propUnsupported,
}

// CheckProperty validates a table property a user sets and returns its key as Delta
// spells it: delta.* keys are matched without regard to case, as Spark does, and must be
// known with a value Delta accepts; other keys are the user's and pass as given.
func CheckProperty(key, value string) (string, error) {
	if !strings.HasPrefix(strings.ToLower(key), "delta.") {
		return key, nil
	}
	canon := ""
	for k := range knownProperties {
		if strings.EqualFold(k, key) {
			canon = k
		}
	}
	if canon == "" {
		return "", &PropertyError{Key: key, Value: value, Reason: "unknown Delta table property"}
	}
	bad := func(want string) error {
		return &PropertyError{Key: canon, Value: value, Reason: "the value must be " + want}
	}
	v := strings.TrimSpace(value)
	switch knownProperties[canon] {
	case propBool:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return "", bad("true or false")
		}
	case propInterval:
		if _, err := parseInterval(v); err != nil {
			return "", bad("an interval such as 'interval 7 days' or '7 days' (months and years have no fixed length)")
		}
	case propPositiveInt:
		if n, err := strconv.Atoi(v); err != nil || n <= 0 {
			return "", bad("a positive integer")
		}
	case propIndexedCols:
		if n, err := strconv.Atoi(v); err != nil || n < -1 {
			return "", bad("an integer, -1 or more")
		}
	case propMappingMode:
		switch strings.ToLower(v) {
		case "none", "name":
		case "id":
			return "", &PropertyError{Key: canon, Value: value, Reason: "mode id applies only to a new table; an existing table takes name"}
		default:
			return "", bad("none or name")
		}
	case propIsolation:
		if v != "Serializable" && v != "WriteSerializable" {
			return "", bad("Serializable or WriteSerializable")
		}
	case propInternal:
		return "", &PropertyError{Key: canon, Value: value, Reason: "Delta sets it itself (a protocol upgrade is asked for explicitly)"}
	case propUnsupported:
		if strings.EqualFold(v, "false") || canon == "delta.checkpointPolicy" && v == "classic" {
			break
		}
		return "", &PropertyError{Key: canon, Value: value, Reason: "the table feature it controls is one this writer does not set"}
	}
	return canon, nil
}
