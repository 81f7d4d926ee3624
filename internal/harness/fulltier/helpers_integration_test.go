//go:build integration

package fulltier_test

import "encoding/json"

func jsonNum(s string) json.Number { return json.Number(s) }

func ptr(v int64) *int64 { return &v }
