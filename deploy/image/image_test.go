package main

import (
	"archive/tar"
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func testOptions(t *testing.T) Options {
	t.Helper()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return Options{Version: "v1.2.3", Source: "https://example.com/cdc2delta", Created: 1700000000,
		CACerts:  write("ca.crt", "-----BEGIN CERTIFICATE-----\n"),
		Binaries: map[string]string{"linux/amd64": write("amd64", "amd64 binary"), "linux/arm64": write("arm64", "arm64 binary")}}
}

// TestBuild: an OCI index with one image per platform, each with the user,
// entrypoint, labels and files the chart and the Dockerfile rely on.
func TestBuild(t *testing.T) {
	o := testOptions(t)
	dir := filepath.Join(t.TempDir(), "image")
	digest, err := Build(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	top, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].Digest != digest ||
		top.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v1.2.3" {
		t.Fatalf("layout holds %+v, want the one index %s named v1.2.3", top.Manifests, digest)
	}
	multi, err := idx.ImageIndex(digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := multi.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s", im.MediaType)
	}
	var platforms []string
	for _, m := range im.Manifests {
		platform := m.Platform.OS + "/" + m.Platform.Architecture
		platforms = append(platforms, platform)
		img, err := multi.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS+"/"+cf.Architecture != platform {
			t.Errorf("%s: config is for %s/%s", platform, cf.OS, cf.Architecture)
		}
		c := cf.Config
		if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/cdc2delta"}) ||
			!slices.Equal(c.Cmd, []string{"run", "--config", "/etc/cdc2delta/cdc2delta.yaml"}) {
			t.Errorf("%s: user %q entrypoint %q cmd %q", platform, c.User, c.Entrypoint, c.Cmd)
		}
		for k, want := range map[string]string{"org.opencontainers.image.version": "v1.2.3",
			"org.opencontainers.image.source": o.Source, "org.opencontainers.image.licenses": "Apache-2.0"} {
			if c.Labels[k] != want {
				t.Errorf("%s: label %s = %q, want %q", platform, k, c.Labels[k], want)
			}
		}
		files := layerFiles(t, img)
		checkFile := func(name string, mode int64, uid int, data string) {
			t.Helper()
			h, ok := files[name]
			if !ok {
				t.Errorf("%s: no %s in the layer", platform, name)
				return
			}
			if h.Mode != mode || h.Uid != uid || (data != "" && h.data != data) {
				t.Errorf("%s: %s mode %o uid %d data %q, want %o %d %q", platform, name, h.Mode, h.Uid, h.data, mode, uid, data)
			}
		}
		checkFile("usr/local/bin/cdc2delta", 0o755, 0, strings.TrimPrefix(platform, "linux/")+" binary")
		checkFile("etc/ssl/certs/ca-certificates.crt", 0o644, 0, "-----BEGIN CERTIFICATE-----\n")
		checkFile("var/lib/cdc2delta/", 0o755, 65532, "")
		checkFile("tmp/", 0o1777, 0, "")
		if !strings.Contains(files["etc/passwd"].data, "nonroot:x:65532:65532:") {
			t.Errorf("%s: /etc/passwd has no user 65532: %q", platform, files["etc/passwd"].data)
		}
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", platforms)
	}

	// The same inputs give the same digest.
	again, err := Build(filepath.Join(t.TempDir(), "image"), o)
	if err != nil || again != digest {
		t.Errorf("rebuilt: %s, %v; want %s", again, err, digest)
	}
}

type entry struct {
	*tar.Header
	data string
}

func layerFiles(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = entry{h, string(data)}
	}
}

// TestDockerfileAgrees: the Dockerfile, for users with Docker, runs the binary
// at the same path, as the same user, with the same command and port.
func TestDockerfileAgrees(t *testing.T) {
	f, err := os.Open("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		instr, rest, _ := strings.Cut(sc.Text(), " ")
		switch instr {
		case "USER", "ENTRYPOINT", "CMD", "EXPOSE":
			got[instr] = rest
		case "COPY":
			fields := strings.Fields(rest)
			switch {
			case strings.Contains(rest, "/out/cdc2delta "):
				got["binary"] = fields[len(fields)-1]
			case strings.Contains(rest, "/out/data "):
				got["data"] = strings.Join(fields[len(fields)-3:], " ")
			}
		}
	}
	c := Config(Options{})
	want := map[string]string{
		"USER":       c.User,
		"ENTRYPOINT": `["` + c.Entrypoint[0] + `"]`,
		"CMD":        `["` + strings.Join(c.Cmd, `", "`) + `"]`,
		"EXPOSE":     strings.TrimSuffix(MetricsPort, "/tcp"),
		"binary":     "/" + BinaryPath,
		"data":       "--chown=65532:65532 /out/data /" + DataDir,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("Dockerfile %s is %q, the image's is %q", k, got[k], w)
		}
	}
}
