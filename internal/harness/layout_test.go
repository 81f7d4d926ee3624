package harness_test

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const (
	module  = "github.com/cdc2delta/cdc2delta"
	harness = module + "/internal/harness"
	product = module + "/cmd/cdc2delta"
)

// TestProductLinksNoHarness keeps the layout honest in both directions: the
// product binary links no harness package, and a package under internal/
// that the product binary does not link belongs under internal/harness.
func TestProductLinksNoHarness(t *testing.T) {
	linked := goList(t, "-deps", product)
	for _, p := range linked {
		if p == harness || strings.HasPrefix(p, harness+"/") {
			t.Errorf("%s links harness package %s; move what it needs out of internal/harness", product, p)
		}
	}
	for _, p := range goList(t, module+"/internal/...") {
		if p == harness || strings.HasPrefix(p, harness+"/") {
			continue
		}
		if !slices.Contains(linked, p) {
			t.Errorf("%s is not linked by %s; a package only tests or cmd/cdc2bench use belongs under internal/harness", p, product)
		}
	}
}

// goList returns the import paths `go list` prints for args.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	// go test puts its own go first in PATH for the test process.
	out, err := exec.CommandContext(t.Context(), "go", append([]string{"list", "-f", "{{.ImportPath}}"}, args...)...).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list %v: %v\n%s", args, err, exit.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}
