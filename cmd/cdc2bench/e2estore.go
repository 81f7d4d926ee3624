package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"google.golang.org/api/option"

	"github.com/cdc2delta/cdc2delta/cmd/internal/runopts"
	"github.com/cdc2delta/cdc2delta/config"
	"github.com/cdc2delta/cdc2delta/deltalog"
)

// e2eStores are the stores `cdc2bench e2e -store` lands the tables on: a
// local directory, or an emulator of S3 (moto), Azure Blob (Azurite) or GCS
// (fake-gcs-server).
var e2eStores = []string{"local", "s3", "azure", "gcs"}

// checkStore refuses a store e2e does not know, and an object store without
// the endpoint of its emulator: the run makes a bucket of its own, which it
// does only on an emulator.
func checkStore(store, endpoint string) error {
	switch {
	case store == "":
		return nil
	case !slices.Contains(e2eStores, store):
		return fmt.Errorf("%w: -store %q: not one of %s", errUsage, store, strings.Join(e2eStores, ", "))
	case store != "local" && endpoint == "":
		return fmt.Errorf("%w: -store %s needs -endpoint, its emulator's URL", errUsage, store)
	}
	return nil
}

// e2eStore makes the place the tables of one run land on store, and returns
// it as tables.path would name it with the product's opener of it, built
// from the storage configuration cdc2delta run would have. local is a
// directory (dir); an object store gets a fresh bucket or container on the
// emulator at endpoint. Credentials come from the environment, as for
// cdc2delta run: AWS_* for S3, AZURE_STORAGE_ACCOUNT_NAME and
// AZURE_STORAGE_ACCOUNT_KEY for Azure; the GCS emulator takes none.
func e2eStore(ctx context.Context, store, endpoint, dir string) (string, func(context.Context, string) (deltalog.Store, error), error) {
	st := config.Default().Storage
	name := fmt.Sprintf("cdc2bench-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var root string
	switch store {
	case "local":
		root = dir
	case "s3":
		st.S3.Endpoint, st.S3.Region, st.S3.PathStyle = endpoint, orDefault(os.Getenv("AWS_REGION"), "us-east-1"), true
		if _, err := newS3Bench(ctx, endpoint, name); err != nil {
			return "", nil, err
		}
		root = "s3://" + name + "/tables"
	case "azure":
		st.Azure.Endpoint = endpoint
		account, key := os.Getenv("AZURE_STORAGE_ACCOUNT_NAME"), os.Getenv("AZURE_STORAGE_ACCOUNT_KEY")
		cred, err := azblob.NewSharedKeyCredential(account, key)
		if err != nil {
			return "", nil, fmt.Errorf("azure: AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY: %w", err)
		}
		c, err := azblob.NewClientWithSharedKeyCredential(endpoint+"/", cred, nil)
		if err != nil {
			return "", nil, fmt.Errorf("azure client for %s: %w", endpoint, err)
		}
		if _, err := c.CreateContainer(ctx, name, nil); err != nil {
			return "", nil, fmt.Errorf("creating container %s on %s: %w", name, endpoint, err)
		}
		root = "az://" + name + "/tables"
	case "gcs":
		st.GCS.Endpoint = endpoint
		c, err := storage.NewClient(ctx, option.WithoutAuthentication(), option.WithEndpoint(endpoint+"/storage/v1/"))
		if err != nil {
			return "", nil, fmt.Errorf("gcs client for %s: %w", endpoint, err)
		}
		defer c.Close()
		if err := c.Bucket(name).Create(ctx, "cdc2bench", nil); err != nil {
			return "", nil, fmt.Errorf("creating bucket %s on %s: %w", name, endpoint, err)
		}
		root = "gs://" + name + "/tables"
	default:
		return "", nil, checkStore(store, endpoint)
	}
	return root, runopts.StoreOpener(st, os.Getenv), nil
}

// orDefault returns v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
