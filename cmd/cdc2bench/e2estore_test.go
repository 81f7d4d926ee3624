package main

import (
	"errors"
	"io"
	"testing"
)

// TestE2EStoreFlag: e2e refuses, before touching a broker, a store it does
// not know, an object store without its emulator, and local without a
// directory; the known stores get past the flags.
func TestE2EStoreFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // "" accepts the flags
	}{
		{"unknown store", []string{"-store", "ftp", "-endpoint", "http://x"}, `cdc2bench: usage: -store "ftp": not one of local, s3, azure, gcs`},
		{"s3 without endpoint", []string{"-store", "s3"}, "cdc2bench: usage: -store s3 needs -endpoint, its emulator's URL"},
		{"azure without endpoint", []string{"-store", "azure"}, "cdc2bench: usage: -store azure needs -endpoint, its emulator's URL"},
		{"local without root", []string{"-store", "local"}, "cdc2bench: usage: -store local needs -root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-brokers", "127.0.0.1:1", "-out", t.TempDir() + "/r.json"}, tc.args...)
			err := e2eCmd(t.Context(), args, io.Discard)
			if !errors.Is(err, errUsage) || err.Error() != tc.want {
				t.Fatalf("e2e %v: got %v, want usage error %q", tc.args, err, tc.want)
			}
		})
	}
	for _, store := range e2eStores {
		if err := checkStore(store, "http://127.0.0.1:1"); err != nil {
			t.Errorf("checkStore(%q): %v", store, err)
		}
	}
}
