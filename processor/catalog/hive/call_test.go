package hive

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/processor/catalog"
)

// fakeMetastore accepts connections on loopback and answers each call with
// reply, which writes the reply message after the call was read (or does
// nothing, or closes the connection).
func fakeMetastore(t *testing.T, reply func(ctx context.Context, p thrift.TProtocol, name string, seq int32) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				ctx := context.Background()
				p := thrift.NewTBinaryProtocolConf(thrift.NewStreamTransportRW(conn), &thrift.TConfiguration{})
				name, _, seq, err := p.ReadMessageBegin(ctx)
				if err != nil {
					return
				}
				if err := p.Skip(ctx, thrift.STRUCT); err != nil {
					return
				}
				if err := reply(ctx, p, name, seq); err != nil {
					return
				}
				_ = p.Flush(ctx) // the client reports what it did not get
			}()
		}
	}()
	return "thrift://" + ln.Addr().String()
}

// exceptionReply answers with the result struct's exception field id.
func exceptionReply(id int16, msg string) func(context.Context, thrift.TProtocol, string, int32) error {
	return func(ctx context.Context, p thrift.TProtocol, name string, seq int32) error {
		if err := p.WriteMessageBegin(ctx, name, thrift.REPLY, seq); err != nil {
			return err
		}
		e := &enc{ctx: ctx, p: p}
		e.structBody(func() { e.structField(id, func() { e.str(1, msg) }) })
		if e.err != nil {
			return e.err
		}
		return p.WriteMessageEnd(ctx)
	}
}

func TestCallErrors(t *testing.T) {
	entry := catalog.Entry{Name: catalog.Name{Schema: "d", Table: "t"}, Location: "file:///t"}
	lookup := func(c *Catalog, ctx context.Context) error { _, err := c.Lookup(ctx, entry.Name); return err }
	create := func(c *Catalog, ctx context.Context) error { return c.Create(ctx, entry) }
	for _, tc := range []struct {
		name    string
		reply   func(context.Context, thrift.TProtocol, string, int32) error
		call    func(*Catalog, context.Context) error
		wantIs  []error
		wantMsg string
	}{
		{"NoSuchObjectException", exceptionReply(2, "d.t table not found"), lookup,
			[]error{catalog.ErrNotFound}, "NoSuchObjectException: d.t table not found"},
		{"AlreadyExistsException", exceptionReply(1, "Table d.t already exists"), create,
			[]error{catalog.ErrExists}, "AlreadyExistsException"},
		{"MetaException", exceptionReply(3, "boom"), create, nil, "create_table: MetaException: boom"},
		{"TApplicationException", func(ctx context.Context, p thrift.TProtocol, name string, seq int32) error {
			if err := p.WriteMessageBegin(ctx, name, thrift.EXCEPTION, seq); err != nil {
				return err
			}
			ae := thrift.NewTApplicationException(thrift.UNKNOWN_METHOD, "Invalid method name: '"+name+"'")
			if err := ae.Write(ctx, p); err != nil {
				return err
			}
			return p.WriteMessageEnd(ctx)
		}, lookup, nil, "TApplicationException: Invalid method name: 'get_table_req'"},
		{"closed without a reply", func(context.Context, thrift.TProtocol, string, int32) error {
			return errors.New("hang up")
		}, lookup, []error{catalog.ErrUnavailable}, "get_table_req on the Hive Metastore"},
		{"a reply to another call", func(ctx context.Context, p thrift.TProtocol, name string, seq int32) error {
			return exceptionReply(2, "x")(ctx, p, name, seq+1)
		}, lookup, []error{catalog.ErrUnavailable}, "unexpected reply"},
		{"no answer", func(ctx context.Context, p thrift.TProtocol, name string, seq int32) error {
			for { // until the client gives up and closes the connection
				if _, err := p.ReadByte(ctx); err != nil {
					return err
				}
			}
		}, lookup, []error{catalog.ErrUnavailable, context.DeadlineExceeded}, "context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Options{URIs: []string{fakeMetastore(t, tc.reply)}})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			err = tc.call(c, ctx)
			require.Error(t, err)
			for _, want := range tc.wantIs {
				require.ErrorIs(t, err, want)
			}
			if tc.wantIs == nil {
				var merr *MetastoreError
				require.ErrorAs(t, err, &merr)
				require.NotErrorIs(t, err, catalog.ErrUnavailable)
			}
			require.ErrorContains(t, err, tc.wantMsg)
		})
	}
}

// No address accepts a connection: every one is tried, and the call fails
// as unavailable.
func TestCallRefused(t *testing.T) {
	var uris []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		uris = append(uris, ln.Addr().String())
		ln.Close()
	}
	c, err := New(Options{URIs: uris})
	require.NoError(t, err)
	_, err = c.Lookup(t.Context(), catalog.Name{Schema: "d", Table: "t"})
	require.ErrorIs(t, err, catalog.ErrUnavailable)
	require.ErrorContains(t, err, uris[1])
}
