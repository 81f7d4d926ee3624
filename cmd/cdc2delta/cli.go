package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Exit codes (see the package documentation).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError is a mistake in the command line or configuration: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// env is what a command runs with: its output streams and the process environment.
type env struct {
	stdout, stderr io.Writer
	lookup         func(string) (string, bool) // os.LookupEnv in the real process
	// self is how a user runs this binary again, for printed commands (selfCommand);
	// "" prints "cdc2delta".
	self string
}

// selfCmd is the command line prefix that runs this binary again.
func (e *env) selfCmd() string {
	if e.self == "" {
		return "cdc2delta"
	}
	return e.self
}

// getenv returns an environment variable, "" when unset.
func (e *env) getenv(k string) string {
	v, _ := e.lookup(k)
	return v
}

// command is one subcommand.
type command struct {
	name    string
	args    string // positional arguments, for the usage line
	summary string
	example string
	// flags declares the command's flags on fs and returns the function that runs it
	// with the positional arguments once flags are parsed.
	flags func(fs *flag.FlagSet, e *env) func(ctx context.Context, args []string) error
}

func commands() []command {
	return []command{
		runCommand(),
		validateCommand(),
		historyCommand(),
		describeCommand(),
		showCommand(),
		checkpointCommand(),
		restoreCommand(),
		cloneCommand(),
		vacuumCommand(),
		optimizeCommand(),
		alterCommand(),
		updateCommand(),
		deleteCommand(),
		quickstartCommand(),
		offsetsCommand(),
		replayCommand(),
		skipCommand(),
		verifyCommand(),
		reconcileCommand(),
		loadCommand(),
		statusCommand(),
		catalogCommand(),
		versionCommand(),
	}
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEnv(ctx, args, &env{stdout: stdout, stderr: stderr, lookup: os.LookupEnv, self: selfCommand()})
}

// selfCommand is how to run this binary again from the current directory, so that the
// commands a command prints run as printed: "cdc2delta" when that is on PATH, "go run
// ./cmd/cdc2delta" under `go run` from the repository, else the executable's path.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "cdc2delta"
	}
	if onPath, err := exec.LookPath("cdc2delta"); err == nil {
		a, errA := os.Stat(onPath)
		b, errB := os.Stat(exe)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return "cdc2delta"
		}
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") { // go run's temporary build
		if st, err := os.Stat(filepath.Join("cmd", "cdc2delta")); err == nil && st.IsDir() {
			return "go run ./cmd/cdc2delta"
		}
		return "cdc2delta"
	}
	return shellQuote(exe)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,=@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func runEnv(ctx context.Context, args []string, e *env) int {
	cmds := commands()
	if len(args) < 2 {
		printUsage(e.stderr, cmds)
		return exitUsage
	}
	name := args[1]
	switch name {
	case "-h", "-help", "--help", "help":
		printUsage(e.stdout, cmds)
		return exitOK
	case "--version":
		name = "version"
	}
	for _, c := range cmds {
		if c.name == name {
			return c.exec(ctx, args[2:], e)
		}
	}
	fmt.Fprintf(e.stderr, "cdc2delta: unknown command %q\n", name)
	if s := suggest(name, cmds); s != "" {
		fmt.Fprintf(e.stderr, "\nDid you mean this?\n  %s %s\n", e.selfCmd(), s)
	}
	fmt.Fprintln(e.stderr)
	printUsage(e.stderr, cmds)
	return exitUsage
}

func (c command) exec(ctx context.Context, args []string, e *env) int {
	fs := flag.NewFlagSet("cdc2delta "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // usage goes where we decide: stdout for --help, stderr on errors
	runFn := c.flags(fs, e)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.printHelp(e.stdout, fs)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "cdc2delta %s: %v\n", c.name, err)
		c.printHelp(e.stderr, fs)
		return exitUsage
	}
	if err := runFn(ctx, pos); err != nil {
		fmt.Fprintf(e.stderr, "cdc2delta %s: %v\n", c.name, err)
		if _, ok := errors.AsType[*usageError](err); ok {
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}

// parseInterspersed lets flags follow positional arguments ("show ./t --limit 5"), which
// the flag package alone stops at.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		rest := fs.Args()
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (c command) printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: cdc2delta %s [flags] %s\n\n%s\n", c.name, c.args, capitalize(c.summary)+".")
	if c.example != "" {
		fmt.Fprintf(w, "\nExample:\n  %s\n", strings.ReplaceAll(strings.TrimSpace(c.example), "\n", "\n  "))
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nFlags:")
		printFlags(w, fs)
	}
	fmt.Fprintln(w, "\nExit codes: 0 success, 1 runtime failure, 2 usage or configuration error.")
}

// printFlags prints fs's flags as flag.PrintDefaults does, but spelled --name as the
// docs and the error messages spell them (the flag package accepts both).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	// PrintDefaults starts each flag's line with "  -name" and its usage lines with
	// "    \t", so only flag lines start with "  -".
	lines := strings.SplitAfter(b.String(), "\n")
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "  -"); ok {
			lines[i] = "  --" + rest
		}
	}
	fmt.Fprint(w, strings.Join(lines, ""))
}

func printUsage(w io.Writer, cmds []command) {
	fmt.Fprint(w, "cdc2delta keeps Delta tables in step with SQL Server via Debezium on Kafka.\n\nUsage: cdc2delta <command> [flags] [arguments]\n\nCommands:\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'cdc2delta <command> --help' for a command's flags and an example.\n",
		"Table arguments are a directory or s3://bucket/prefix.\n",
		"Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error.\n")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
