// Package glue registers Delta tables in the AWS Glue Data Catalog, as Athena
// and Spark on Glue read them: an EXTERNAL_TABLE with table_type=DELTA and
// spark.sql.sources.provider=delta, the location in the storage descriptor
// and in the serde's "path" parameter, and the columns of the Delta schema in
// Hive types.
package glue

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// The parameters and storage descriptor fields engines read.
const (
	paramTableType   = "table_type"                 // Athena: DELTA
	paramProvider    = "spark.sql.sources.provider" // Spark on Glue: delta
	paramExternal    = "EXTERNAL"
	paramPartitions  = "cdc2delta.partitionColumns" // comma-separated; the log owns partitioning
	tableTypeExt     = "EXTERNAL_TABLE"
	serdeLibrary     = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
	inputFormat      = "org.apache.hadoop.mapred.SequenceFileInputFormat"
	outputFormat     = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
	serdePathParam   = "path"
	commentParamName = "comment"
)

// maxAttempts bounds the SDK's attempts at one call.
const maxAttempts = 3

// Options configure a Glue catalog.
type Options struct {
	// Region is the AWS region (default: the AWS configuration's).
	Region string
	// Endpoint overrides Glue's endpoint (a test server such as moto).
	Endpoint string
	// CatalogID is the AWS account id whose catalog holds the tables
	// (default: the caller's).
	CatalogID string
	// AccessKeyID, SecretAccessKey and SessionToken are static credentials;
	// empty: the AWS default chain (environment, profile, instance role).
	AccessKeyID, SecretAccessKey, SessionToken string
}

// Catalog is a Glue Data Catalog. A call is retried at most twice, a
// second apart at most, on what the AWS SDK deems transient (throttling,
// 5xx, a connection reset or closed under a response); the caller's context
// bounds the whole call, and the registrar retries beyond that.
type Catalog struct {
	client    *glue.Client
	catalogID *string
	endpoint  string // for errors
}

var _ catalog.Catalog = (*Catalog)(nil)

// New builds the client; it does not contact Glue.
func New(ctx context.Context, o Options) (*Catalog, error) {
	var lo []func(*awsconfig.LoadOptions) error
	if o.Region != "" {
		lo = append(lo, awsconfig.WithRegion(o.Region))
	}
	if o.AccessKeyID != "" {
		lo = append(lo, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(o.AccessKeyID, o.SecretAccessKey, o.SessionToken)))
	}
	lo = append(lo, awsconfig.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = maxAttempts
			o.MaxBackoff = time.Second
		})
	}))
	cfg, err := awsconfig.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("glue: loading AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		if o.Endpoint == "" {
			return nil, fmt.Errorf("glue: no region: set catalog.region or AWS_REGION")
		}
		cfg.Region = "us-east-1"
	}
	c := &Catalog{endpoint: "AWS Glue"}
	if o.CatalogID != "" {
		c.catalogID = aws.String(o.CatalogID)
	}
	c.client = glue.NewFromConfig(cfg, func(g *glue.Options) {
		if o.Endpoint != "" {
			g.BaseEndpoint = aws.String(o.Endpoint)
			c.endpoint = "Glue at " + o.Endpoint
		}
	})
	return c, nil
}

func names(n catalog.Name) (db, table string, err error) {
	if n.Catalog != "" || n.Schema == "" || n.Table == "" {
		return "", "", fmt.Errorf("glue: table name %q must have two parts, database.table", n.String())
	}
	return n.Schema, n.Table, nil
}

// Lookup returns the entry under n, or an error wrapping
// catalog.ErrNotFound.
func (c *Catalog) Lookup(ctx context.Context, n catalog.Name) (catalog.Entry, error) {
	db, name, err := names(n)
	if err != nil {
		return catalog.Entry{}, err
	}
	out, err := c.client.GetTable(ctx, &glue.GetTableInput{CatalogId: c.catalogID, DatabaseName: &db, Name: &name})
	if err != nil {
		return catalog.Entry{}, c.wrap(err, "looking up", n)
	}
	return entryOf(n, out.Table)
}

// Create registers e, or fails wrapping catalog.ErrExists when the name is
// taken (catalog.ErrNotFound: the database does not exist).
func (c *Catalog) Create(ctx context.Context, e catalog.Entry) error {
	db, _, err := names(e.Name)
	if err != nil {
		return err
	}
	_, err = c.client.CreateTable(ctx, &glue.CreateTableInput{CatalogId: c.catalogID, DatabaseName: &db, TableInput: tableInput(e)})
	return c.wrap(err, "creating", e.Name)
}

// Update replaces the entry under e.Name with e (Glue keeps the old one as
// a table version).
func (c *Catalog) Update(ctx context.Context, e catalog.Entry) error {
	db, _, err := names(e.Name)
	if err != nil {
		return err
	}
	_, err = c.client.UpdateTable(ctx, &glue.UpdateTableInput{CatalogId: c.catalogID, DatabaseName: &db, TableInput: tableInput(e)})
	return c.wrap(err, "updating", e.Name)
}

// tableInput is e as Glue records a Delta table.
func tableInput(e catalog.Entry) *types.TableInput {
	params := map[string]string{}
	for k, v := range e.Properties {
		params[k] = v
	}
	params[paramTableType] = "DELTA"
	params[paramProvider] = "delta"
	params[paramExternal] = "TRUE"
	if len(e.PartitionColumns) > 0 {
		params[paramPartitions] = strings.Join(e.PartitionColumns, ",")
	} else {
		delete(params, paramPartitions)
	}
	var cols []types.Column
	for _, col := range catalog.Columns(e.Schema) {
		gc := types.Column{Name: aws.String(col.Name), Type: aws.String(col.Type)}
		if col.Comment != "" {
			gc.Comment = aws.String(col.Comment)
		}
		cols = append(cols, gc)
	}
	in := &types.TableInput{
		Name:       aws.String(e.Name.Table),
		TableType:  aws.String(tableTypeExt),
		Parameters: params,
		StorageDescriptor: &types.StorageDescriptor{
			Columns:      cols,
			Location:     aws.String(e.Location),
			InputFormat:  aws.String(inputFormat),
			OutputFormat: aws.String(outputFormat),
			SerdeInfo: &types.SerDeInfo{
				SerializationLibrary: aws.String(serdeLibrary),
				Parameters:           map[string]string{serdePathParam: e.Location, "serialization.format": "1"},
			},
		},
	}
	if e.Description != "" {
		in.Description = aws.String(e.Description)
		params[commentParamName] = e.Description
	}
	return in
}

// entryOf reads a Glue table back into an entry.
func entryOf(n catalog.Name, t *types.Table) (catalog.Entry, error) {
	e := catalog.Entry{Name: n, Properties: t.Parameters, Description: aws.ToString(t.Description)}
	switch {
	case strings.EqualFold(t.Parameters[paramTableType], "DELTA") || strings.EqualFold(t.Parameters[paramProvider], "delta"):
		e.Format = catalog.FormatDelta
	case t.Parameters[paramTableType] != "":
		e.Format = strings.ToLower(t.Parameters[paramTableType])
	default:
		e.Format = "hive"
	}
	if p := t.Parameters[paramPartitions]; p != "" {
		e.PartitionColumns = strings.Split(p, ",")
	}
	sd := t.StorageDescriptor
	if sd == nil {
		return e, nil
	}
	e.Location = aws.ToString(sd.Location)
	if e.Location == "" && sd.SerdeInfo != nil {
		e.Location = sd.SerdeInfo.Parameters[serdePathParam]
	}
	if len(sd.Columns) > 0 {
		schema, err := schemaOf(sd.Columns)
		if err != nil {
			return e, fmt.Errorf("glue: reading %s: %w", n, err)
		}
		e.Schema = schema
	}
	return e, nil
}
