package config_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/cdc2delta/cdc2delta/config"
)

func TestSecretNeverPrints(t *testing.T) {
	const pw = "hunter2"
	s := config.Secret(pw)
	sasl := config.SASL{Mechanism: "PLAIN", Username: "u", Password: s}
	c := config.Default()
	c.Kafka.SASL = sasl
	c.SchemaRegistry.BearerToken = s

	var logBuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("x", "pw", s, "sasl", sasl)
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("x", "pw", s, "cfg", c)
	js, err := json.Marshal(c)
	require.NoError(t, err)
	ym, err := yaml.Marshal(c)
	require.NoError(t, err)

	outputs := map[string]string{
		"%v":    fmt.Sprintf("%v", s),
		"%s":    fmt.Sprintf("%s", s),
		"%q":    fmt.Sprintf("%q", s),
		"%x":    fmt.Sprintf("%x", s),
		"%#v":   fmt.Sprintf("%#v", s),
		"%+v":   fmt.Sprintf("%+v", c),
		"%#v c": fmt.Sprintf("%#v", c),
		"error": fmt.Errorf("connecting as %v with %s", sasl, s).Error(),
		"slog":  logBuf.String(),
		"json":  string(js),
		"yaml":  string(ym),
	}
	for name, out := range outputs {
		require.NotContains(t, out, pw, name)
		require.Contains(t, out, "***", name)
	}
	require.Equal(t, pw, s.Reveal())
	require.Empty(t, config.Secret("").String(), "an unset secret shows as unset")
}
