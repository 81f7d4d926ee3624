// Package config is the user-facing configuration of cdc2delta: one YAML file with
// ${ENV} expansion, typed into Config, checked by Validate, which reports every problem
// at once with its path and what is accepted.
//
// Only cmd/cdc2delta imports this package; library packages take their own options.
// The package carries no API-stability promise.
package config
