package merge_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The oracle scripts' own tests: a failing run's script fails its replay
// the same way, a passing one's passes, and a script that does not fit
// the oracle is refused.

// captureT stands for a test that is expected to fail: it keeps the
// failures rather than failing the test that runs it.
type captureT struct {
	testing.TB
	failures []string
}

func (c *captureT) Helper() {}

func (c *captureT) Errorf(format string, args ...any) {
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}

func (c *captureT) Fatalf(format string, args ...any) {
	c.Errorf(format, args...)
	c.FailNow()
}

func (c *captureT) FailNow() {
	if len(c.failures) == 0 {
		c.failures = append(c.failures, "FailNow")
	}
	runtime.Goexit()
}

func (c *captureT) Failed() bool { return len(c.failures) > 0 }

// failureText is the failures without their stacks, which differ between
// a run and its replay above the oracle.
func failureText(failures []string) []string {
	out := make([]string, len(failures))
	for i, f := range failures {
		if _, msg, ok := strings.Cut(f, "\tError:"); ok {
			f = msg
		}
		out[i] = f
	}
	return out
}

// capture runs f on its own goroutine, which a failure ends.
func capture(t *testing.T, f func(t testing.TB)) *captureT {
	c := &captureT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(c)
	}()
	<-done
	return c
}

// TestOracleScript shows that a failing run saves a script that fails the
// same way when replayed, with every decision of the run taken from it,
// and that a passing run's script replays and passes.
func TestOracleScript(t *testing.T) {
	// Seed 35 (a regression seed) fails commits and re-splits batches:
	// the script carries more than the batches.
	const seed = 35
	type call struct {
		batch   int
		version int64
		rows    string
	}
	// broken fails the check of version 3 and keeps every call before it.
	broken := func(calls *[]call) checkHook {
		return func(batch int, version int64, rows string) error {
			*calls = append(*calls, call{batch, version, rows})
			if version == 3 {
				return fmt.Errorf("injected failure at batch %d", batch)
			}
			return nil
		}
	}
	dir := t.TempDir()
	var path string
	var recorded, replayed []call
	rec := capture(t, func(t testing.TB) {
		recordOracle(t, seed, recordOptions{hook: broken(&recorded), dir: dir, saved: &path})
	})
	require.True(t, rec.Failed(), "the broken check did not fail the run")
	require.NotEmpty(t, path, "the failed run saved no script")
	s, err := loadOracleScript(path)
	require.NoError(t, err)
	var faults, resplits int
	for _, d := range s.decisions {
		faults += map[bool]int{true: 1}[d.What == "fault" && d.Value == 1]
		resplits += map[bool]int{true: 1}[d.What == "resplit batches"]
	}
	require.Positive(t, faults, "the run injected no fault before it failed: pick another seed")
	require.Positive(t, resplits, "the run re-split no batch before it failed: pick another seed")

	rep := capture(t, func(t testing.TB) { replayOracle(t, path, broken(&replayed)) })
	require.Equal(t, failureText(rec.failures), failureText(rep.failures), "the replay failed otherwise")
	require.Equal(t, recorded, replayed, "the replay checked other versions")

	// Without the broken check, the same script replays to where the run
	// stopped and passes, as it does once the failure is fixed.
	require.False(t, capture(t, func(t testing.TB) { replayOracle(t, path, nil) }).Failed())

	// A passing run's script replays and passes, all its decisions taken.
	var passing string
	require.False(t, capture(t, func(t testing.TB) {
		recordOracle(t, seed, recordOptions{dir: dir, always: true, saved: &passing})
	}).Failed())
	require.False(t, capture(t, func(t testing.TB) { replayOracle(t, passing, nil) }).Failed())
}

// TestOracleScriptMismatch shows that a script whose decisions do not fit
// the run fails the replay, naming the decision.
func TestOracleScriptMismatch(t *testing.T) {
	dir := t.TempDir()
	var path string
	recordOracle(t, 35, recordOptions{dir: dir, always: true, saved: &path})
	s, err := loadOracleScript(path)
	require.NoError(t, err)
	s.decisions[len(s.decisions)/2].What = "no such decision"
	bad, err := s.save(dir)
	require.NoError(t, err)
	c := capture(t, func(t testing.TB) { replayOracle(t, bad, nil) })
	require.Len(t, c.failures, 1)
	require.Contains(t, c.failures[0], errScriptMismatch.Error())
	require.Contains(t, c.failures[0], `is "no such decision" in the script`)
}

// TestOracleScriptRoundTrip shows that a script holds the batches as the
// generator made them.
func TestOracleScriptRoundTrip(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		cfg := newOracleConfig(rng)
		src := history(rng, cfg)
		queue := batches(rng, cfg, deliver(rng, cfg, src.events))
		s := &oracleScript{header: scriptHeader{Seed: seed}, src: src, batches: queue}
		path, err := s.save(t.TempDir())
		require.NoError(t, err)
		got, err := loadOracleScript(path)
		require.NoError(t, err)
		require.Equal(t, queue, got.batches, "seed %d", seed)
		require.Equal(t, src.rows, got.src.rows, "seed %d", seed)
		require.Same(t, src.layout, got.src.layout, "seed %d", seed)
	}
}
