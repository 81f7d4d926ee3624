package processor

import (
	"fmt"

	"github.com/cdc2delta/cdc2delta/processor/merge"
	"github.com/cdc2delta/cdc2delta/processor/route"
)

// tableSettings returns the merge options, bad-input policy and change log path of the table
// src routes to: PerTable's, else the Sink template; the policy is
// PerTable's, else TablePolicies', else BadInput. A setting New could not
// check is refused here with ErrOptions.
// historySettings returns the path and options of the history table of
// the table src routes to (ADR 0046): "" for none.
func (p *Processor) historySettings(src route.TableSource) (string, merge.HistoryOptions) {
	if p.opts.PerTable == nil {
		return "", merge.HistoryOptions{}
	}
	ts := p.opts.PerTable(src)
	return ts.History, ts.HistoryOptions
}

func (p *Processor) tableSettings(src route.TableSource) (merge.Options, Policy, string, error) {
	so, pol, logPath := p.opts.Sink, Policy(""), ""
	if p.opts.PerTable != nil {
		ts := p.opts.PerTable(src)
		so, pol, logPath = ts.Sink, ts.BadInput, ts.ChangeLog
	}
	if pol == "" {
		pol = p.opts.BadInput
		if tp, ok := p.opts.TablePolicies[src.Path]; ok {
			pol = tp
		}
	}
	switch {
	case pol != PolicyFail && pol != PolicyDeadLetter:
		return so, pol, logPath, fmt.Errorf("%w: table %s: unknown bad-input policy %q", ErrOptions, src.Path, pol)
	case pol == PolicyDeadLetter && p.opts.DeadLetterTopic == "":
		return so, pol, logPath, fmt.Errorf("%w: table %s: dead letter topic must be set for its dead-letter policy", ErrOptions, src.Path)
	case so.DeleteMode != "" && so.DeleteMode != merge.DeleteHard && so.DeleteMode != merge.DeleteSoft:
		return so, pol, logPath, fmt.Errorf("%w: table %s: unknown delete mode %q", ErrOptions, src.Path, so.DeleteMode)
	case so.Mode != "" && so.Mode != merge.ModeAuto && so.Mode != merge.ModeDV && so.Mode != merge.ModeCoW:
		return so, pol, logPath, fmt.Errorf("%w: table %s: unknown merge mode %q", ErrOptions, src.Path, so.Mode)
	}
	return so, pol, logPath, nil
}
