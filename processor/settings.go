package processor

import (
	"fmt"

	"github.com/cdc2delta/cdc2delta/processor/merge"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// tableSettings returns the merge options, bad-input policy and change log
// path of the table src routes to (settingsOf).
func (p *Processor) tableSettings(src route.TableSource) (merge.Options, Policy, string, error) {
	ts, err := p.settingsOf(src)
	return ts.Sink, ts.BadInput, ts.ChangeLog, err
}

// settingsOf returns the settings of the table src routes to: PerTable's
// (called once), else the Sink template; the policy is PerTable's, else
// TablePolicies', else BadInput. A setting New could not check is refused
// here with ErrOptions.
func (p *Processor) settingsOf(src route.TableSource) (TableSettings, error) {
	ts := TableSettings{Sink: p.opts.Sink}
	if p.opts.PerTable != nil {
		ts = p.opts.PerTable(src)
	}
	so, pol := ts.Sink, ts.BadInput
	if pol == "" {
		pol = p.opts.BadInput
		if tp, ok := p.opts.TablePolicies[src.Path]; ok {
			pol = tp
		}
		ts.BadInput = pol
	}
	switch {
	case pol != PolicyFail && pol != PolicyDeadLetter:
		return ts, fmt.Errorf("%w: table %s: unknown bad-input policy %q", ErrOptions, src.Path, pol)
	case pol == PolicyDeadLetter && p.opts.DeadLetterTopic == "":
		return ts, fmt.Errorf("%w: table %s: dead letter topic must be set for its dead-letter policy", ErrOptions, src.Path)
	case so.DeleteMode != "" && so.DeleteMode != merge.DeleteHard && so.DeleteMode != merge.DeleteSoft:
		return ts, fmt.Errorf("%w: table %s: unknown delete mode %q", ErrOptions, src.Path, so.DeleteMode)
	case so.Mode != "" && so.Mode != merge.ModeAuto && so.Mode != merge.ModeDV && so.Mode != merge.ModeCoW:
		return ts, fmt.Errorf("%w: table %s: unknown merge mode %q", ErrOptions, src.Path, so.Mode)
	case ts.HistoryOnly && ts.History != "":
		return ts, fmt.Errorf("%w: table %s: history only keeps the history table at the table's path, and a second history table is set at %s", ErrOptions, src.Path, ts.History)
	case ts.HistoryOnly && so.DeleteMode == merge.DeleteSoft:
		return ts, fmt.Errorf("%w: table %s: history only keeps no current-state table to flag deleted rows in (delete mode soft)", ErrOptions, src.Path)
	case (ts.History != "" || ts.HistoryOnly) && len(ts.HistoryOptions.TrackHistory) > 0 && len(ts.HistoryOptions.TrackHistoryExcept) > 0:
		return ts, fmt.Errorf("%w: table %s: history: track_history and track_history_except are both set", ErrOptions, src.Path)
	}
	return ts, nil
}
