package unity

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// APIError is an error answer of the server.
type APIError struct {
	Status  int
	Code    string // error_code, such as TABLE_ALREADY_EXISTS
	Message string
	kind    error // the catalog sentinel it matches, or nil
}

func (e *APIError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap is the catalog sentinel the answer means.
func (e *APIError) Unwrap() error { return e.kind }

func apiError(status int, body []byte) error {
	var b struct {
		ErrorCode string `json:"error_code"`
		Message   string `json:"message"`
	}
	if json.Unmarshal(body, &b) != nil || b.Message == "" {
		b.Message = strings.TrimSpace(string(body))
		if len(b.Message) > 300 {
			b.Message = b.Message[:300] + "…"
		}
	}
	e := &APIError{Status: status, Code: b.ErrorCode, Message: b.Message}
	switch {
	case status == 401 || status == 403 || b.ErrorCode == "UNAUTHENTICATED" || b.ErrorCode == "PERMISSION_DENIED":
		e.kind = catalog.ErrDenied
	case status == 404:
		e.kind = catalog.ErrNotFound
	case status == 409 || strings.HasSuffix(b.ErrorCode, "ALREADY_EXISTS"):
		e.kind = catalog.ErrExists
	case status == 429 || status >= 500:
		e.kind = catalog.ErrUnavailable
	}
	return e
}

func isNotFound(err error) bool { return errors.Is(err, catalog.ErrNotFound) }
