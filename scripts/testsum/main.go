// Command testsum runs `go test -json` for scripts/test.sh, prints what plain `go test`
// would print (the package lines, and the output of failed tests only), keeps the JSON,
// and sums up several runs: every skipped test by name (with the runs, named after
// their files, that skipped it) and one closing line, "tests: N passed, M failed,
// K skipped", counting every run of a test.
//
//	testsum run [-v] FILE -- go test -json ./...   # exit code of the command
//	testsum summary FILE...
//
// With -v every line of output is printed, as `go test -v` prints it.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: testsum run [-v] FILE -- CMD...  |  testsum summary FILE...")
		return 2
	}
	switch args[0] {
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "summary":
		s := &summary{}
		for _, f := range args[1:] {
			if err := s.readFile(f); err != nil {
				fmt.Fprintln(stderr, "testsum:", err)
				return 1
			}
		}
		s.print(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "testsum: unknown command %q\n", args[0])
	return 2
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	verbose := false
	if len(args) > 0 && args[0] == "-v" {
		verbose, args = true, args[1:]
	}
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(stderr, "usage: testsum run [-v] FILE -- CMD...")
		return 2
	}
	file, cmdArgs := args[0], args[2:]
	out, err := os.Create(file)
	if err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
		return 1
	}
	defer out.Close()
	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
		return 1
	}
	r := newRenderer(stdout, verbose)
	if err := r.render(io.TeeReader(pipe, out)); err != nil {
		fmt.Fprintln(stderr, "testsum:", err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		fmt.Fprintln(stderr, "testsum:", err)
		return 1
	}
	return 0
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// renderer prints a `go test -json` stream the way plain `go test` prints: package
// lines, and the output of failed tests; with verbose everything.
type renderer struct {
	w       io.Writer
	verbose bool
	held    map[string][]string // output of running tests, by package and test
}

func newRenderer(w io.Writer, verbose bool) *renderer {
	return &renderer{w: w, verbose: verbose, held: map[string][]string{}}
}

func (r *renderer) render(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Action == "" {
			fmt.Fprintln(r.w, sc.Text()) // not an event: the go command's own output
			continue
		}
		r.event(ev)
	}
	return sc.Err()
}

func (r *renderer) event(ev event) {
	key := ev.Package + " " + ev.Test
	switch ev.Action {
	case "build-output":
		fmt.Fprint(r.w, ev.Output)
	case "output":
		switch {
		case r.verbose:
			fmt.Fprint(r.w, ev.Output)
		case ev.Test == "":
			// Package lines: "ok  pkg 1.2s", "FAIL pkg", the panic of a test binary
			// that died; the bare PASS of a passing package is not shown.
			if ev.Output != "PASS\n" && !progressLine(ev.Output) {
				fmt.Fprint(r.w, ev.Output)
			}
		case !progressLine(ev.Output):
			r.held[key] = append(r.held[key], ev.Output)
		}
	case "fail":
		if ev.Test == "" {
			// A package that failed: the output of its tests that never finished
			// (a panic, a timeout) is what says why.
			for k, lines := range r.held {
				if strings.HasPrefix(k, ev.Package+" ") {
					r.flush(lines)
					delete(r.held, k)
				}
			}
			return
		}
		r.flush(r.held[key])
		delete(r.held, key)
	case "pass", "skip":
		delete(r.held, key)
	}
}

func (r *renderer) flush(lines []string) {
	if r.verbose {
		return // printed already
	}
	for _, l := range lines {
		fmt.Fprint(r.w, l)
	}
}

// progressLine reports the lines plain `go test` does not print for passing tests.
func progressLine(s string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// summary counts test results over several `go test -json` files.
type summary struct {
	passed, failed int
	skips          int
	skipped        []string            // "pkg TestX/sub: reason", each once
	skippedIn      map[string][]string // the runs (file names) that skipped it
	brokenPkgs     []string            // failed packages without a failed test (build failure, crash, timeout)
}

func (s *summary) readFile(name string) error {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a step that did not run
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return s.read(f, strings.TrimSuffix(filepath.Base(name), ".json"))
}

func (s *summary) read(in io.Reader, run string) error {
	last := map[string]string{} // the last output line of each test, for skip reasons
	failedIn := map[string]bool{}
	var failedPkgs []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		key := ev.Package + " " + ev.Test
		switch {
		case ev.Action == "output" && ev.Test != "":
			if l := strings.TrimSpace(ev.Output); l != "" && !progressLine(l) && !strings.HasPrefix(l, "--- ") {
				last[key] = l
			}
		case ev.Test == "": // a build failure shows as its package's fail
			if ev.Action == "fail" {
				failedPkgs = append(failedPkgs, ev.Package)
			}
		case ev.Action == "pass":
			s.passed++
		case ev.Action == "fail":
			s.failed++
			failedIn[ev.Package] = true
		case ev.Action == "skip":
			reason := last[key]
			if _, after, ok := strings.Cut(reason, ": "); ok && strings.Contains(reason, "_test.go:") {
				reason = after // "x_test.go:12: reason"
			}
			name := ev.Package + " " + ev.Test
			if reason != "" {
				name += ": " + reason
			}
			s.skips++
			if s.skippedIn == nil {
				s.skippedIn = map[string][]string{}
			}
			if _, seen := s.skippedIn[name]; !seen {
				s.skipped = append(s.skipped, name)
			}
			s.skippedIn[name] = append(s.skippedIn[name], run)
		}
	}
	for _, p := range failedPkgs {
		if !failedIn[p] && !slices.Contains(s.brokenPkgs, p) {
			s.brokenPkgs = append(s.brokenPkgs, p)
		}
	}
	return sc.Err()
}

func (s *summary) print(w io.Writer) {
	if len(s.skipped) > 0 {
		fmt.Fprintf(w, "skipped tests (%d):\n", len(s.skipped))
		for _, n := range s.skipped {
			fmt.Fprintf(w, "  %s [%s]\n", n, strings.Join(s.skippedIn[n], ", "))
		}
	}
	line := fmt.Sprintf("tests: %d passed, %d failed, %d skipped", s.passed, s.failed, s.skips)
	if len(s.brokenPkgs) > 0 {
		line += fmt.Sprintf("; packages failed outside any test (build, crash or timeout): %s", strings.Join(s.brokenPkgs, ", "))
	}
	fmt.Fprintln(w, line)
}
