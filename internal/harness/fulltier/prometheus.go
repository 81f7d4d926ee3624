package fulltier

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// StartPrometheus starts a Prometheus of the test on 127.0.0.1 with config (a
// prometheus.yml) through scripts/setup/prometheus.sh, and returns its URL. The
// binary is CDC2DELTA_PROMETHEUS (scripts/setup/prometheus.sh fetch prints it);
// the test fails when it is unset. It is stopped when the test ends.
func StartPrometheus(t testing.TB, config string) string {
	t.Helper()
	bin := env(t, "CDC2DELTA_PROMETHEUS")
	script := filepath.Join(filepath.Dir(ScriptsDir(t)), "setup", "prometheus.sh")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("fulltier: stopping prometheus: %v\n%s", err, out)
		}
	})
	cmd := exec.Command("bash", script, "start", dir)
	cmd.Env = append(os.Environ(), "PROMETHEUS="+bin)
	out, err := cmd.Output()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
		t.Fatalf("fulltier: starting prometheus in %s: %v\n%s", dir, err, log)
	}
	return strings.TrimSpace(string(out))
}
