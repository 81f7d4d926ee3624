package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// testdata/sample.json is `go test -json` of two packages: tsfix with a passing, a
// failing and a skipped test and a subtest of each kind, and tsfix/broken, which does
// not build.

func TestRender(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "sample.json"))
	require.NoError(t, err)
	defer f.Close()
	var out bytes.Buffer
	require.NoError(t, newRenderer(&out, false).render(f))
	require.Equal(t, `# tsfix/broken [tsfix/broken.test]
broken/b.go:3:9: syntax error: unexpected {, expected )
FAIL	tsfix/broken [build failed]
    a_test.go:6: before
    a_test.go:6: boom
--- FAIL: TestFail (0.00s)
FAIL
FAIL	tsfix	0.007s
`, out.String(), "what plain go test prints: no passing or skipped test's output")
}

func TestSummary(t *testing.T) {
	var out bytes.Buffer
	code := run([]string{"summary", filepath.Join("testdata", "sample.json"), filepath.Join(t.TempDir(), "not-run.json")}, &out, &out)
	require.Equal(t, 0, code)
	require.Equal(t, `skipped tests (2):
  tsfix TestSkip: needs a broker [sample]
  tsfix TestSub/b: not on linux [sample]
tests: 3 passed, 1 failed, 2 skipped; packages failed outside any test (build, crash or timeout): tsfix/broken
`, out.String())

	// Two runs of the same tests (the fast tier and its race run) count twice and list
	// each skipped test once, with both runs.
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "sample.json"))
	require.NoError(t, err)
	for _, run := range []string{"fast", "race"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, run+".json"), data, 0o600))
	}
	out.Reset()
	require.Equal(t, 0, run([]string{"summary", filepath.Join(dir, "fast.json"), filepath.Join(dir, "race.json")}, &out, &out))
	require.Equal(t, `skipped tests (2):
  tsfix TestSkip: needs a broker [fast, race]
  tsfix TestSub/b: not on linux [fast, race]
tests: 6 passed, 2 failed, 4 skipped; packages failed outside any test (build, crash or timeout): tsfix/broken
`, out.String())
}

func TestRunKeepsJSONAndExitCode(t *testing.T) {
	file := filepath.Join(t.TempDir(), "out.json")
	var out, errb bytes.Buffer
	code := run([]string{"run", file, "--", "cat", filepath.Join("testdata", "sample.json")}, &out, &errb)
	require.Equal(t, 0, code)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("testdata", "sample.json"))
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Contains(t, out.String(), "--- FAIL: TestFail")
	require.Empty(t, errb.String())

	code = run([]string{"run", file, "--", "sh", "-c", "exit 3"}, &out, &errb)
	require.Equal(t, 3, code)
}
