package operator

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Topics returns the topics an operator command acts on: topics, or, when
// regex is set, the topics on the cluster whose names match it, as the
// processor consumes them. Listing the topics waits at most timeout
// (DefaultTimeout when 0).
func Topics(ctx context.Context, adm *kadm.Client, timeout time.Duration, topics []string, regex string) ([]string, error) {
	if regex == "" {
		return topics, nil
	}
	re, err := regexp.Compile(regex)
	if err != nil {
		return nil, fmt.Errorf("%w: topic regex: %v", ErrOptions, err)
	}
	all, err := kafkaCall(ctx, timeout, func(ctx context.Context) (kadm.TopicDetails, error) { return adm.ListTopics(ctx) })
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
