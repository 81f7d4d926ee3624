// Package deltatext holds Delta's text forms of values: the strings of
// add.partitionValues and the date and timestamp strings of add.stats. The
// data-file writer and the checkpoint reader, which rebuilds these strings from
// typed checkpoint columns, both use it, so one value has one text in the log;
// data skipping parses stats bounds with it.
//
// Decimals are written plain, without an exponent ("-12.30"), by
// decimal128.FormatBig; that form is the same in stats and partition values.
package deltatext
