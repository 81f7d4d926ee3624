package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name    string
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		{"no build info", "", nil, "devel"},
		{"stamped, no build info", "v0.2.0", nil, "v0.2.0"},
		{"go install @version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, "v0.2.0"},
		{"go install @pseudo-version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.1-0.20261206170000-0123456789ab"}}, "v0.2.1-0.20261206170000-0123456789ab"},
		{"go build in a checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "devel (revision 0123456789ab)"},
		{"modified checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "devel (revision 0123456789ab, modified)"},
		{"release build", "v0.2.0", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "v0.2.0 (revision 0123456789ab)"},
		{"stamp wins over module version", "v0.3.0-rc.1", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, "v0.3.0-rc.1"},
		{"empty module version", "", &debug.BuildInfo{}, "devel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, describe(tt.stamped, tt.info))
		})
	}
}
