package processor

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// franz-go's own lines about connections are chatter next to the
// processor's reports of the same failure: none of them reaches INFO, and
// its errors stay visible at WARN.
func TestKafkaLoggerLevels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level kgo.LogLevel
		want  string // slog level in the output; "" when dropped at INFO
	}{
		{"info", kgo.LogLevelInfo, ""},
		{"warn", kgo.LogLevelWarn, ""},
		{"error", kgo.LogLevelError, "level=WARN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := kafkaLogger{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
			l.Log(tc.level, "unable to open connection to broker", "addr", "localhost:1", "err", "connection refused")
			if tc.want == "" {
				require.Empty(t, buf.String())
				return
			}
			require.Contains(t, buf.String(), tc.want)
			require.Contains(t, buf.String(), "kafka: unable to open connection to broker")
		})
	}
}

// At DEBUG franz-go's chatter is there for whoever asks for it.
func TestKafkaLoggerDebug(t *testing.T) {
	var buf bytes.Buffer
	l := kafkaLogger{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	require.Equal(t, kgo.LogLevelInfo, l.Level())
	l.Log(kgo.LogLevelWarn, "unable to open connection to broker")
	require.Contains(t, buf.String(), "level=DEBUG")
	quiet := kafkaLogger{slog.New(slog.NewTextHandler(&buf, nil))}
	require.Equal(t, kgo.LogLevelError, quiet.Level(), "no chatter is formatted when it would be dropped")
}

func TestPartitionsString(t *testing.T) {
	got := partitionsString(map[string][]int32{"b": {2, 0}, "a": {1}})
	require.Equal(t, "a[1] b[0,2]", got)
	require.False(t, strings.Contains(got, "map["))
}
