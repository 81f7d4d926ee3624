package operator

import (
	"context"
	"fmt"
	"regexp"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Topics returns the topics an operator command acts on: topics, or, when
// regex is set, the topics on the cluster whose names match it, as the
// processor consumes them.
func Topics(ctx context.Context, adm *kadm.Client, topics []string, regex string) ([]string, error) {
	if regex == "" {
		return topics, nil
	}
	re, err := regexp.Compile(regex)
	if err != nil {
		return nil, fmt.Errorf("%w: topic regex: %v", ErrOptions, err)
	}
	all, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing topics: %w", err)
	}
	var out []string
	for _, t := range all.Names() {
		if re.MatchString(t) {
			out = append(out, t)
		}
	}
	return out, nil
}
