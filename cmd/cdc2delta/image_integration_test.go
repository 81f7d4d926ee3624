//go:build integration

package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/dbzgen"
	"github.com/cdc2delta/cdc2delta/internal/harness/fulltier"
)

// TestImageRunsFromItsRoot builds the container image as a release does
// (scripts/release.sh image, no container engine), unpacks this machine's
// platform's layers into a root directory and starts the image's entrypoint
// and command from that root, with a config pointing at the test broker: as
// root, chrooted and as the image's user; otherwise the extracted binary runs
// with the root's paths (and the test says so). It must apply the records,
// answer /readyz 200 and stop cleanly on SIGTERM.
func TestImageRunsFromItsRoot(t *testing.T) {
	const version = "v0.0.0-imagetest"
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "scripts/release.sh", "image", version, out)
	build.Dir = "../.."
	build.Env = append(os.Environ(), "IMAGE_ARCHS="+runtime.GOARCH)
	start := time.Now()
	logs, err := build.CombinedOutput()
	require.NoError(t, err, "scripts/release.sh image: %s", logs)
	t.Logf("built the image in %s", time.Since(start).Round(time.Second))

	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755)) // the image's "/", which its user must traverse
	cfg := unpackImage(t, filepath.Join(out, "cdc2delta_"+version+"_image"), runtime.GOARCH, root)
	require.Equal(t, version, cfg.Labels["org.opencontainers.image.version"])
	require.Equal(t, "65532:65532", cfg.User)
	require.Len(t, cfg.Entrypoint, 1)

	prefix := fmt.Sprintf("image%d", time.Now().UnixNano())
	src := newCrashSource(t, fulltier.KafkaBrokers(t), prefix, dbzgen.WorkloadOptions{Seed: 44, Keys: 50, Snapshot: true})
	require.NoError(t, src.produce(t.Context(), 200))

	chroot := os.Geteuid() == 0
	// In the root: what the image's paths are to the process.
	at := func(p string) string {
		if chroot {
			return p
		}
		return filepath.Join(root, p)
	}
	metrics := closedPort(t)
	configPath := cfg.Cmd[len(cfg.Cmd)-1] // run --config PATH
	require.NoError(t, os.WriteFile(filepath.Join(root, configPath), fmt.Appendf(nil, `
kafka:
  brokers: [%q]
  group_id: %q
  instance_id: image-0
  topic_regex: '^%s\..*'
schema_registry: {url: %q}
tables: {path: %q}
memory: {key_index: disk, key_index_dir: %q}
batch: {max_records: 200, max_age: 100ms, min_records: 1}
metrics: {listen: %q}
`, fulltier.KafkaBrokers(t)[0], prefix+"-group", regexp.QuoteMeta(prefix), src.regURL,
		at("/var/lib/cdc2delta/tables")+"/{database}/{schema}/{table}", at("/var/lib/cdc2delta/index"), metrics), 0o644))

	args := append([]string{}, cfg.Cmd...)
	var cmd *exec.Cmd
	if chroot {
		cmd = exec.Command(cfg.Entrypoint[0], args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
		cmd.Dir = "/"
	} else {
		t.Log("not root: running the image's binary with its Env and Cmd, without chroot or its user")
		args[len(args)-1] = filepath.Join(root, configPath)
		cmd = exec.Command(filepath.Join(root, cfg.Entrypoint[0]), args...)
	}
	cmd.Env = cfg.Env
	run := startCmd(t, cmd, filepath.Join(t.TempDir(), "run.log"))

	tables := make([]crashTable, len(src.tables))
	for i, tb := range src.tables {
		d := tb.Def()
		tables[i] = crashTable{t: t, dir: filepath.Join(root, "var/lib/cdc2delta/tables", d.Database, d.Schema, d.Name)}
	}
	waitCaughtUp(t, tables, src.endOffsets(), run)
	var code int
	var body string
	ready := poll(60*time.Second, 200*time.Millisecond, func() bool {
		code, body = httpGet(t, "http://"+metrics+"/readyz")
		return code == http.StatusOK
	})
	require.True(t, ready, "/readyz %d %s; log:\n%s", code, body, run.logTail())
	require.Equal(t, exitOK, run.terminate(), run.logTail())
}

// imageConfig is the run configuration of an OCI image config.
type imageConfig struct {
	User       string
	Entrypoint []string
	Cmd        []string
	Env        []string
	Labels     map[string]string
}

// unpackImage reads the OCI layout at dir (index.json -> the image index -> the
// manifest for linux/arch), extracts its layers into root in order and returns
// the image's config. As root it keeps the layers' owners.
func unpackImage(t *testing.T, dir, arch, root string) imageConfig {
	t.Helper()
	blob := func(digest string) []byte {
		algo, hex, ok := strings.Cut(digest, ":")
		require.True(t, ok, "digest %q", digest)
		data, err := os.ReadFile(filepath.Join(dir, "blobs", algo, hex))
		require.NoError(t, err)
		return data
	}
	type descriptor struct {
		MediaType string
		Digest    string
		Platform  *struct{ OS, Architecture string }
	}
	var top, index struct{ Manifests []descriptor }
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &top))
	require.Len(t, top.Manifests, 1)
	require.NoError(t, json.Unmarshal(blob(top.Manifests[0].Digest), &index))
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	for _, m := range index.Manifests {
		if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == arch {
			require.NoError(t, json.Unmarshal(blob(m.Digest), &manifest))
		}
	}
	require.NotEmpty(t, manifest.Layers, "no linux/%s image in %s", arch, dir)
	var config struct{ Config imageConfig }
	require.NoError(t, json.Unmarshal(blob(manifest.Config.Digest), &config))
	for _, l := range manifest.Layers {
		require.Equal(t, "application/vnd.oci.image.layer.v1.tar+gzip", l.MediaType)
		extractLayer(t, blob(l.Digest), root)
	}
	return config.Config
}

func extractLayer(t *testing.T, layer []byte, root string) {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(string(layer)))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		require.NoError(t, err)
		name := filepath.Join(root, filepath.FromSlash(h.Name))
		require.True(t, strings.HasPrefix(name, root+string(filepath.Separator)), "layer entry %q leaves the root", h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(name, 0o755))
		case tar.TypeReg:
			f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			require.NoError(t, err)
			_, err = io.Copy(f, tr)
			require.NoError(t, errors.Join(err, f.Close()))
		default:
			t.Fatalf("layer entry %q has type %c, which this test does not unpack", h.Name, h.Typeflag)
		}
		require.NoError(t, os.Chmod(name, h.FileInfo().Mode()))
		if os.Geteuid() == 0 {
			require.NoError(t, os.Lchown(name, h.Uid, h.Gid))
		}
	}
}
