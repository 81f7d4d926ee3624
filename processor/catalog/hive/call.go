package hive

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// MetastoreError is an exception the metastore raised for a call
// (NoSuchObjectException, AlreadyExistsException, MetaException, ...), or a
// TApplicationException (an unknown method, an internal error). It unwraps
// to catalog.ErrNotFound for NoSuchObjectException and to catalog.ErrExists
// for AlreadyExistsException.
type MetastoreError struct {
	Method    string // the Thrift method, such as "create_table"
	Exception string // the exception's IDL name
	Message   string // what the metastore said
}

func (e *MetastoreError) Error() string {
	return fmt.Sprintf("hive metastore: %s: %s: %s", e.Method, e.Exception, e.Message)
}

func (e *MetastoreError) Unwrap() error {
	switch e.Exception {
	case "NoSuchObjectException":
		return catalog.ErrNotFound
	case "AlreadyExistsException":
		return catalog.ErrExists
	}
	return nil
}

// method is one Thrift method: its name and the exceptions its result
// struct carries, by field id.
type method struct {
	name       string
	exceptions map[int16]string
}

var (
	getTableReq = method{"get_table_req", map[int16]string{
		1: "MetaException", 2: "NoSuchObjectException"}}
	createTable = method{"create_table", map[int16]string{
		1: "AlreadyExistsException", 2: "InvalidObjectException", 3: "MetaException", 4: "NoSuchObjectException"}}
	alterTable = method{"alter_table", map[int16]string{
		1: "InvalidOperationException", 2: "MetaException"}}
	getDatabase = method{"get_database", map[int16]string{
		1: "NoSuchObjectException", 2: "MetaException"}}
	createDatabase = method{"create_database", map[int16]string{
		1: "AlreadyExistsException", 2: "InvalidObjectException", 3: "MetaException"}}
)

// call runs one Thrift call on a connection of its own: it writes the
// arguments (args writes the fields of the args struct), reads the result
// and hands a success value (field 0) to success, which may be nil for void
// methods. The connection's deadline is ctx's, or CallTimeout from now when
// ctx has none, and ctx's cancellation interrupts it.
//
// Errors: the metastore's exceptions as *MetastoreError; every failure to
// connect, send or receive (a refused connection, a reset, a deadline)
// wraps catalog.ErrUnavailable, and ctx's error when ctx ended it.
func (c *Catalog) call(ctx context.Context, m method, args func(*enc), success func(context.Context, thrift.TProtocol) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.CallTimeout)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	conn, addr, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close() //nolint:errcheck // a closing error after the reply changes nothing
	// A deadline in the past wakes a blocked read or write at once.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := conn.SetDeadline(deadline); err != nil {
		return c.unavailable(ctx, m, addr, err)
	}
	p := thrift.NewTBinaryProtocolConf(thrift.NewStreamTransportRW(conn), &thrift.TConfiguration{})
	seq := c.seq.Add(1)
	if err := c.send(ctx, p, m, seq, args); err != nil {
		return c.unavailable(ctx, m, addr, err)
	}
	merr, err := c.receive(ctx, p, m, seq, success)
	if err != nil {
		return c.unavailable(ctx, m, addr, err)
	}
	if merr != nil {
		return merr
	}
	return nil
}

func (c *Catalog) dial(ctx context.Context) (net.Conn, string, error) {
	var errs []error
	for _, addr := range c.addrs {
		conn, err := c.dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn, addr, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	err := errors.Join(errs...)
	if ctx.Err() != nil {
		return nil, "", fmt.Errorf("%w: connecting to the Hive Metastore at %v: %w (%w)", catalog.ErrUnavailable, c.addrs, ctx.Err(), err)
	}
	return nil, "", fmt.Errorf("%w: connecting to the Hive Metastore at %v: %w", catalog.ErrUnavailable, c.addrs, err)
}

func (c *Catalog) unavailable(ctx context.Context, m method, addr string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %s on the Hive Metastore at %s: %w (%w)", catalog.ErrUnavailable, m.name, addr, ctx.Err(), err)
	}
	return fmt.Errorf("%w: %s on the Hive Metastore at %s: %w", catalog.ErrUnavailable, m.name, addr, err)
}

func (c *Catalog) send(ctx context.Context, p thrift.TProtocol, m method, seq int32, args func(*enc)) error {
	if err := p.WriteMessageBegin(ctx, m.name, thrift.CALL, seq); err != nil {
		return err
	}
	e := &enc{ctx: ctx, p: p}
	e.structBody(func() { args(e) })
	if e.err != nil {
		return e.err
	}
	if err := p.WriteMessageEnd(ctx); err != nil {
		return err
	}
	return p.Flush(ctx)
}

// receive reads the reply. An exception the method declares, or a
// TApplicationException, comes back as the first result; the second is a
// failure to read the reply at all.
func (c *Catalog) receive(ctx context.Context, p thrift.TProtocol, m method, seq int32, success func(context.Context, thrift.TProtocol) error) (*MetastoreError, error) {
	name, typ, gotSeq, err := p.ReadMessageBegin(ctx)
	if err != nil {
		return nil, err
	}
	if typ == thrift.EXCEPTION {
		ae := thrift.NewTApplicationException(thrift.UNKNOWN_APPLICATION_EXCEPTION, "")
		if err := ae.Read(ctx, p); err != nil {
			return nil, err
		}
		return &MetastoreError{Method: m.name, Exception: "TApplicationException", Message: ae.Error()}, p.ReadMessageEnd(ctx)
	}
	if typ != thrift.REPLY || name != m.name || gotSeq != seq {
		return nil, fmt.Errorf("unexpected reply %q (type %d, seq %d) to %s (seq %d)", name, typ, gotSeq, m.name, seq)
	}
	var merr *MetastoreError
	err = readStruct(ctx, p, func(id int16, t thrift.TType) (bool, error) {
		if id == 0 && success != nil {
			return true, success(ctx, p)
		}
		exc, ok := m.exceptions[id]
		if !ok || t != thrift.STRUCT {
			return false, nil
		}
		merr = &MetastoreError{Method: m.name, Exception: exc}
		return true, readStruct(ctx, p, func(id int16, t thrift.TType) (bool, error) {
			if id != 1 || t != thrift.STRING {
				return false, nil
			}
			var err error
			merr.Message, err = p.ReadString(ctx)
			return true, err
		})
	})
	if err != nil {
		return nil, err
	}
	return merr, p.ReadMessageEnd(ctx)
}
