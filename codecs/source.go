package codecs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"golang.org/x/sync/singleflight"
)

// SchemaSource returns the Avro schema text registered under an id.
// It returns an error wrapping [ErrUnknownSchema] when the id does not
// exist. [Registry] is the Schema Registry implementation; tests use maps.
type SchemaSource interface {
	SchemaByID(ctx context.Context, id int) (string, error)
}

// schemaCache maps schema ids to compiled codecs and layouts. Ids are
// immutable in a registry, so entries never expire; errors are not cached,
// so a registry outage resolves itself once the registry is back.
type schemaCache struct {
	src   SchemaSource
	opts  *Options
	byID  sync.Map // int → *compiled
	group singleflight.Group
}

func (c *schemaCache) get(ctx context.Context, id int) (*compiled, error) {
	if v, ok := c.byID.Load(id); ok {
		return v.(*compiled), nil
	}
	// A shared fetch runs under the ctx of the caller that started it. If
	// that caller gave up, the fetch fails with its context error while
	// ours is still live: join (or start) a fresh fetch instead. The cap
	// only guards against a source that misreports context errors.
	for attempt := 0; ; attempt++ {
		comp, err := c.fetch(ctx, id)
		if err == nil || ctx.Err() != nil || attempt == 8 ||
			!(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return comp, err
		}
	}
}

func (c *schemaCache) fetch(ctx context.Context, id int) (*compiled, error) {
	// Concurrent misses for one id share one fetch and compile; DoChan lets
	// each waiter give up on its own ctx.
	ch := c.group.DoChan(strconv.Itoa(id), func() (any, error) {
		if v, ok := c.byID.Load(id); ok {
			return v, nil
		}
		text, err := c.src.SchemaByID(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("fetching schema %d: %w", id, err)
		}
		comp, err := compile(id, text, c.opts)
		if err != nil {
			return nil, err
		}
		c.opts.Logger.Debug("compiled schema", "schema_id", id, "record", comp.layout.Name, "columns", len(comp.layout.Columns))
		c.byID.Store(id, comp)
		return comp, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*compiled), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for schema %d: %w", ErrRegistry, id, context.Cause(ctx))
	}
}
