// Package chartcheck tests the Helm chart in deploy/helm/cdc2delta: every
// manifest `helm template` renders, with the default values and with
// deploy/helm/full-values.yaml, decodes strictly into its Kubernetes API type.
//
// It is its own module (deploy/go.mod) so that the Kubernetes and image
// libraries stay out of the product's dependencies.
package chartcheck
