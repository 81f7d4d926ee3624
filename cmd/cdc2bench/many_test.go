package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cdc2delta/cdc2delta/internal/harness/e2ebench"
)

func TestRenderManyRatiosNeedTwoSides(t *testing.T) {
	run := func(cpu float64) *e2ebench.ManyResult {
		return &e2ebench.ManyResult{VersionsPerTableMinute: 6, FilesCreated: 100, CPUShare: cpu, RestartSeconds: 1}
	}
	for _, tc := range []struct {
		name   string
		sides  []string
		ratios bool
	}{
		{"after only", []string{"after"}, false},
		{"before and after", []string{"before", "after"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &manyReport{Cases: []*manyCase{{Tables: 200, Scenario: "trickle"}}}
			for i, s := range tc.sides {
				rep.Sides = append(rep.Sides, manySide{Name: s})
				rep.Cases[0].Results = append(rep.Cases[0].Results, &manyCaseResult{Side: s, Run: run(0.2 / float64(i+1))})
			}
			var buf bytes.Buffer
			renderMany(&buf, rep)
			out := buf.String()
			if got := strings.Contains(out, "Ratios"); got != tc.ratios {
				t.Fatalf("ratios section present = %v, want %v:\n%s", got, tc.ratios, out)
			}
			if tc.ratios && !strings.Contains(out, "| trickle | 200 | 1.0× | 1.0× | 2.0× | 1.0× |") {
				t.Fatalf("ratio row missing:\n%s", out)
			}
		})
	}
}
