package fulltier

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// PythonPath returns the venv python of the full tier.
func PythonPath(t testing.TB) string {
	t.Helper()
	return env(t, EnvPython)
}

// ScriptsDir returns the absolute path of the repository's scripts/py.
func ScriptsDir(t testing.TB) string {
	t.Helper()
	return env(t, EnvScripts)
}

// Python runs a script of scripts/py (a name such as "deltaread.py", or an
// absolute path) with the venv python and returns its standard output. It
// fails the test on a non-zero exit, quoting standard error.
func Python(t testing.TB, script string, args ...string) string {
	t.Helper()
	if !filepath.IsAbs(script) {
		script = filepath.Join(ScriptsDir(t), script)
	}
	return runPython(t, nil, append([]string{script}, args...)...)
}

// PythonCode runs the Python source code with the venv python (as
// `python -c code args...`, so sys.argv[1:] are args) and returns its
// standard output. It fails the test on a non-zero exit, quoting standard
// error.
func PythonCode(t testing.TB, code string, args ...string) string {
	t.Helper()
	return runPython(t, nil, append([]string{"-c", code}, args...)...)
}

func runPython(t testing.TB, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), PythonPath(t), args...)
	dieWithTest(cmd)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		what := args[0]
		if what == "-c" {
			what = "python -c " + firstLine(args[1])
		}
		t.Fatalf("fulltier: %s: %v\nstderr:\n%s", what, err, tail(stderr.String(), 8000))
	}
	return stdout.String()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// tail keeps the end of long tool output, where Python puts the traceback.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}
