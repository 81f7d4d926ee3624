package operator

import (
	"context"
	"errors"
	"time"

	"github.com/cdc2delta/cdc2delta/internal/deadline"
)

// DefaultTimeout is how long an operator command waits for one Kafka answer
// when none is given.
const DefaultTimeout = 30 * time.Second

// ErrKafkaNoAnswer reports a Kafka request that got no answer within its
// timeout: a broker that accepts connections and never answers fails the
// command instead of holding it.
var ErrKafkaNoAnswer = errors.New("operator: kafka did not answer")

// kafkaCall runs one Kafka request with a deadline of d (DefaultTimeout when
// 0); the error of a request the deadline ended matches ErrKafkaNoAnswer and
// context.DeadlineExceeded.
func kafkaCall[T any](ctx context.Context, d time.Duration, fn func(context.Context) (T, error)) (T, error) {
	if d <= 0 {
		d = DefaultTimeout
	}
	var out T
	err := deadline.Run(ctx, d, "kafka.brokers", func(ctx context.Context) error {
		var err error
		out, err = fn(ctx)
		return err
	})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err = noAnswerError{err}
	}
	return out, err
}

// noAnswerError marks a Kafka request its deadline ended as ErrKafkaNoAnswer,
// keeping the text deadline.NoAnswer gave it.
type noAnswerError struct{ err error }

func (e noAnswerError) Error() string        { return e.err.Error() }
func (e noAnswerError) Unwrap() error        { return e.err }
func (e noAnswerError) Is(target error) bool { return target == ErrKafkaNoAnswer }
