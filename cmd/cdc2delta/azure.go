package main

import (
	"context"
	"strings"

	"github.com/cdc2delta/cdc2delta/cmd/internal/runopts"
	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/deltalog/azstore"
	"github.com/cdc2delta/cdc2delta/deltalog/gcsstore"
	"github.com/cdc2delta/cdc2delta/deltalog/s3store"
)

// parseStoreURL checks an object store table URL with the parser of its store.
func parseStoreURL(raw string) error {
	if azstore.IsURL(raw) {
		_, err := azstore.ParseURL(raw)
		return err
	}
	if strings.HasPrefix(raw, "gs://") {
		_, err := gcsstore.ParseURL(raw)
		return err
	}
	_, err := s3store.ParseURL(raw)
	return err
}

// azureOpener opens Azure table URLs with the storage.azure settings, each
// empty one taken from getenv (runopts.AzureOpener).
func azureOpener(a config.Azure, getenv func(string) string) func(context.Context, string) (deltalog.Store, error) {
	return runopts.AzureOpener(a, getenv)
}
