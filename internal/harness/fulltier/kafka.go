package fulltier

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// KafkaBrokers returns the bootstrap addresses of the full tier's Kafka broker.
func KafkaBrokers(t testing.TB) []string {
	t.Helper()
	return strings.Split(env(t, EnvKafkaBrokers), ",")
}

// KafkaTool runs one of Kafka's own command-line tools, such as
// "kafka-consumer-groups" or "kafka-topics", and returns its standard output.
// It fails the test if the tool exits non-zero, quoting its standard error.
// Pass the broker with "--bootstrap-server", as on the command line.
func KafkaTool(t testing.TB, name string, args ...string) string {
	t.Helper()
	stdout, stderr, err := runKafkaTool(t, name, args...)
	if err != nil {
		t.Fatalf("fulltier: %s %s: %v\nstderr:\n%s\nstdout:\n%s",
			name, strings.Join(args, " "), err, stderr, stdout)
	}
	return stdout
}

// KafkaToolResult runs a Kafka command-line tool like KafkaTool but returns
// its outputs and exit error instead of failing, for tests that expect a
// tool to refuse something.
func KafkaToolResult(t testing.TB, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runKafkaTool(t, name, args...)
}

func runKafkaTool(t testing.TB, name string, args ...string) (string, string, error) {
	t.Helper()
	tool := env(t, EnvKafkaTool)
	cmd := exec.CommandContext(t.Context(), tool, append([]string{name}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}
