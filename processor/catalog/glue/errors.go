package glue

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go"

	"github.com/cdc2delta/cdc2delta/deltalog"
	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// schemaOf reads Glue columns back into a Delta schema.
func schemaOf(cols []types.Column) (*deltalog.StructType, error) {
	s := &deltalog.StructType{}
	for _, c := range cols {
		t, err := catalog.ParseHiveType(aws.ToString(c.Type))
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", aws.ToString(c.Name), err)
		}
		f := deltalog.StructField{Name: aws.ToString(c.Name), Type: t, Nullable: true}
		if c.Comment != nil && *c.Comment != "" {
			f.Metadata = map[string]any{"comment": *c.Comment}
		}
		s.Fields = append(s.Fields, f)
	}
	return s, nil
}

// wrap names the action and table, and maps Glue's errors onto the
// catalog's sentinels.
func (c *Catalog) wrap(err error, action string, n catalog.Name) error {
	if err == nil {
		return nil
	}
	var sentinel error
	var api smithy.APIError
	var resp *awshttp.ResponseError
	var netErr net.Error
	switch {
	case errors.As(err, new(*types.EntityNotFoundException)):
		sentinel = catalog.ErrNotFound
	case errors.As(err, new(*types.AlreadyExistsException)):
		sentinel = catalog.ErrExists
	case errors.As(err, new(*types.AccessDeniedException)):
		sentinel = catalog.ErrDenied
	case errors.As(err, &api) && deniedCode(api.ErrorCode()):
		sentinel = catalog.ErrDenied
	case errors.As(err, &resp) && (resp.HTTPStatusCode() == 401 || resp.HTTPStatusCode() == 403):
		sentinel = catalog.ErrDenied
	case errors.As(err, &resp) && (resp.HTTPStatusCode() >= 500 || resp.HTTPStatusCode() == 429):
		sentinel = catalog.ErrUnavailable
	case errors.As(err, &api) && (api.ErrorFault() == smithy.FaultServer || api.ErrorCode() == "ThrottlingException"):
		sentinel = catalog.ErrUnavailable
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr):
		sentinel = catalog.ErrUnavailable
	case errors.As(err, &api):
		return fmt.Errorf("glue: %s %s in %s: %w", action, n, c.endpoint, err)
	default:
		// No answer of Glue's own: the request did not get through.
		sentinel = catalog.ErrUnavailable
	}
	return fmt.Errorf("glue: %s %s in %s: %w: %w", action, n, c.endpoint, sentinel, err)
}

func deniedCode(code string) bool {
	switch code {
	case "AccessDeniedException", "UnrecognizedClientException", "InvalidClientTokenId",
		"InvalidSignatureException", "SignatureDoesNotMatch", "ExpiredTokenException",
		"MissingAuthenticationTokenException", "IncompleteSignature":
		return true
	}
	return false
}
