package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image is; the Dockerfile and the Helm chart use the same.
const (
	UID        = 65532
	BinaryPath = "usr/local/bin/cdc2delta"
	CAPath     = "etc/ssl/certs/ca-certificates.crt"
	ConfigPath = "/etc/cdc2delta/cdc2delta.yaml"
	// DataDir is writable by the user: the on-disk key index (memory.key_index_dir).
	DataDir     = "var/lib/cdc2delta"
	MetricsPort = "9464/tcp"
)

// Options are an image's contents.
type Options struct {
	Version  string
	Source   string
	CACerts  string
	Created  int64             // Unix seconds: file and image times, for reproducible digests
	Binaries map[string]string // "linux/amd64" -> static binary
}

// Build writes the image index to an OCI layout at dir and returns its digest.
func Build(dir string, o Options) (v1.Hash, error) {
	if _, err := os.Stat(dir); err == nil {
		return v1.Hash{}, fmt.Errorf("%s exists: give a new directory", dir)
	}
	ca, err := os.ReadFile(o.CACerts)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("reading the CA certificates: %w", err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	platforms := make([]string, 0, len(o.Binaries))
	for p := range o.Binaries {
		platforms = append(platforms, p)
	}
	slices.Sort(platforms)
	for _, p := range platforms {
		img, err := platformImage(o, p, ca)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("image for %s: %w", p, err)
		}
		osName, arch, _ := strings.Cut(p, "/")
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: osName, Architecture: arch}}})
	}
	// The layout's index.json names the multi-platform index by the version, as
	// skopeo (oci:DIR:VERSION) and crane expect.
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("writing the OCI layout: %w", err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": o.Version})); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the OCI layout: %w", err)
	}
	return idx.Digest()
}

func platformImage(o Options, platform string, ca []byte) (v1.Image, error) {
	bin, err := os.ReadFile(o.Binaries[platform])
	if err != nil {
		return nil, err
	}
	files, err := rootLayer(bin, ca, time.Unix(o.Created, 0).UTC())
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(files)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	osName, arch, _ := strings.Cut(platform, "/")
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = osName, arch
	cf.Created = v1.Time{Time: time.Unix(o.Created, 0).UTC()}
	cf.Config = Config(o)
	return mutate.ConfigFile(img, cf)
}

// Config is the image's run configuration.
func Config(o Options) v1.Config {
	return v1.Config{
		User:         fmt.Sprintf("%d:%d", UID, UID),
		Entrypoint:   []string{"/" + BinaryPath},
		Cmd:          []string{"run", "--config", ConfigPath},
		Env:          []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/" + CAPath},
		ExposedPorts: map[string]struct{}{MetricsPort: {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "cdc2delta",
			"org.opencontainers.image.version":  o.Version,
			"org.opencontainers.image.source":   o.Source,
			"org.opencontainers.image.licenses": "Apache-2.0",
		},
	}
}

// rootLayer is the image's one layer: the binary, the CA bundle, the user and
// the directories it writes to.
func rootLayer(bin, ca []byte, mtime time.Time) ([]byte, error) {
	type entry struct {
		name string
		mode int64
		uid  int
		data []byte // nil: a directory
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", UID, UID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", UID)
	entries := []entry{
		{name: "etc", mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/cdc2delta", mode: 0o755},
		{name: "etc/ssl", mode: 0o755},
		{name: "etc/ssl/certs", mode: 0o755},
		{name: CAPath, mode: 0o644, data: ca},
		{name: "home", mode: 0o755},
		{name: "home/nonroot", mode: 0o700, uid: UID},
		{name: "tmp", mode: 0o1777},
		{name: "usr", mode: 0o755},
		{name: "usr/local", mode: 0o755},
		{name: "usr/local/bin", mode: 0o755},
		{name: BinaryPath, mode: 0o755, data: bin},
		{name: "var", mode: 0o755},
		{name: "var/lib", mode: 0o755},
		{name: DataDir, mode: 0o755, uid: UID},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, Size: int64(len(e.data)), ModTime: mtime}
		if e.data == nil {
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarDir writes the files under dir to a tar at path, names relative to dir.
func tarDir(dir, path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	tw := tar.NewWriter(f)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		return fmt.Errorf("archiving %s: %w", dir, err)
	}
	return tw.Close()
}
