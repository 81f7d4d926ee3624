package registry

import (
	"errors"
	"fmt"
	"net/http"
)

// Confluent error codes this registry returns. The HTTP status is the first
// three digits.
const (
	codeSubjectNotFound = 40401
	codeVersionNotFound = 40402
	codeSchemaNotFound  = 40403
	codeInvalidSchema   = 42201
	codeInvalidVersion  = 42202
	codeIDDoesNotMatch  = 42207
	codeStore           = 50001
)

// ErrSchemaNotFound is returned for a schema id the registry never issued.
var ErrSchemaNotFound = errors.New("registry: schema not found")

// ErrSubjectNotFound is returned for a subject with no registered schema.
var ErrSubjectNotFound = errors.New("registry: subject not found")

// ErrVersionNotFound is returned for a version a subject does not have.
var ErrVersionNotFound = errors.New("registry: version not found")

// ErrInvalidSchema is returned when a schema does not parse as Avro.
var ErrInvalidSchema = errors.New("registry: invalid schema")

// ErrInvalidVersion is returned for a version that is neither a positive
// integer, -1 nor "latest".
var ErrInvalidVersion = errors.New("registry: invalid version")

// apiError is the Confluent error body, {"error_code":40403,"message":"..."}.
type apiError struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

// status is the HTTP status a Confluent error code maps to: the first three
// digits of a five-digit code, or the code itself when it is already one.
func (e apiError) status() int {
	if e.Code >= 10000 {
		return e.Code / 100
	}
	return e.Code
}

// toAPIError maps an error from the store to the code a Confluent registry
// would answer with.
func toAPIError(err error) apiError {
	code := codeStore
	switch {
	case errors.Is(err, ErrSchemaNotFound):
		code = codeSchemaNotFound
	case errors.Is(err, ErrSubjectNotFound):
		code = codeSubjectNotFound
	case errors.Is(err, ErrVersionNotFound):
		code = codeVersionNotFound
	case errors.Is(err, ErrInvalidSchema):
		code = codeInvalidSchema
	case errors.Is(err, ErrInvalidVersion):
		code = codeInvalidVersion
	}
	return apiError{Code: code, Message: err.Error()}
}

// badRequest is the body for a request the registry cannot parse at all.
func badRequest(format string, args ...any) apiError {
	return apiError{Code: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}
