package main

import "time"

// poll calls cond every interval until it holds (true) or timeout has passed (false):
// require.Eventually for waits that fail with their own message, and that call cond on
// the test's goroutine.
func poll(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
	return true
}
