// Command image assembles the cdc2delta container image without a container
// engine: an OCI image index with one image per platform, each FROM scratch with
// one layer holding the static release binary, the build machine's CA
// certificates and a non-root user. It writes an OCI image layout directory and,
// with -archive, the same as a tar (an "oci-archive" for skopeo, podman or crane).
//
//	go run ./image -version v0.2.0 -binary linux/amd64=dist/amd64/cdc2delta \
//	    -binary linux/arm64=dist/arm64/cdc2delta -out dist/image
//
// The image runs as the Dockerfile's does: user 65532, entrypoint
// /usr/local/bin/cdc2delta, command `run --config /etc/cdc2delta/cdc2delta.yaml`,
// port 9464 (image_test.go checks that the two agree).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

type binaries map[string]string // platform (os/arch) -> path

func (b binaries) String() string { return fmt.Sprint(map[string]string(b)) }

func (b binaries) Set(s string) error {
	platform, path, ok := strings.Cut(s, "=")
	if !ok || !strings.Contains(platform, "/") || path == "" {
		return fmt.Errorf("%q is not OS/ARCH=PATH (e.g. linux/amd64=dist/cdc2delta)", s)
	}
	if _, dup := b[platform]; dup {
		return fmt.Errorf("platform %s given twice", platform)
	}
	b[platform] = path
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	bins := binaries{}
	var o Options
	fs.Var(bins, "binary", "OS/ARCH=PATH of a static cdc2delta binary for that platform (repeat per platform)")
	fs.StringVar(&o.Version, "version", "", "the release version (org.opencontainers.image.version)")
	fs.StringVar(&o.Source, "source", "https://github.com/cdc2delta/cdc2delta", "org.opencontainers.image.source")
	fs.StringVar(&o.CACerts, "ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle copied into the image")
	fs.Int64Var(&o.Created, "created", 0, "image creation time, Unix seconds (default: $SOURCE_DATE_EPOCH, else 0)")
	out := fs.String("out", "", "the OCI image layout directory to write (must not exist)")
	archive := fs.String("archive", "", "also write the layout as this tar file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(bins) == 0 || *out == "" || o.Version == "" {
		return errors.New("-binary, -version and -out are required")
	}
	if o.Created == 0 && os.Getenv("SOURCE_DATE_EPOCH") != "" {
		if _, err := fmt.Sscan(os.Getenv("SOURCE_DATE_EPOCH"), &o.Created); err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", os.Getenv("SOURCE_DATE_EPOCH"), err)
		}
	}
	o.Binaries = bins
	digest, err := Build(*out, o)
	if err != nil {
		return err
	}
	fmt.Println(*out)
	if *archive != "" {
		if err := tarDir(*out, *archive); err != nil {
			return err
		}
		fmt.Println(*archive)
	}
	fmt.Println(digest)
	return nil
}
