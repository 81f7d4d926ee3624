package hive

import (
	"context"
	"sort"

	"github.com/apache/thrift/lib/go/thrift"
)

// enc writes Thrift struct fields and keeps the first error, so that a
// struct's fields read as a list of calls.
type enc struct {
	ctx context.Context
	p   thrift.TProtocol
	err error
}

func (e *enc) do(f func() error) {
	if e.err == nil {
		e.err = f()
	}
}

// field writes one field header, its value (f) and its end.
func (e *enc) field(id int16, t thrift.TType, f func()) {
	e.do(func() error { return e.p.WriteFieldBegin(e.ctx, "", t, id) })
	f()
	e.do(func() error { return e.p.WriteFieldEnd(e.ctx) })
}

// structBody writes a struct's begin, its fields (f) and its stop and end.
func (e *enc) structBody(f func()) {
	e.do(func() error { return e.p.WriteStructBegin(e.ctx, "") })
	f()
	e.do(func() error { return e.p.WriteFieldStop(e.ctx) })
	e.do(func() error { return e.p.WriteStructEnd(e.ctx) })
}

func (e *enc) str(id int16, s string) {
	e.field(id, thrift.STRING, func() { e.do(func() error { return e.p.WriteString(e.ctx, s) }) })
}

func (e *enc) i32(id int16, v int32) {
	e.field(id, thrift.I32, func() { e.do(func() error { return e.p.WriteI32(e.ctx, v) }) })
}

func (e *enc) boolean(id int16, v bool) {
	e.field(id, thrift.BOOL, func() { e.do(func() error { return e.p.WriteBool(e.ctx, v) }) })
}

// strMap writes a map<string,string> in key order (stable bytes on the wire).
func (e *enc) strMap(id int16, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e.field(id, thrift.MAP, func() {
		e.do(func() error { return e.p.WriteMapBegin(e.ctx, thrift.STRING, thrift.STRING, len(keys)) })
		for _, k := range keys {
			e.do(func() error { return e.p.WriteString(e.ctx, k) })
			e.do(func() error { return e.p.WriteString(e.ctx, m[k]) })
		}
		e.do(func() error { return e.p.WriteMapEnd(e.ctx) })
	})
}

func (e *enc) strList(id int16, l []string) {
	e.field(id, thrift.LIST, func() {
		e.do(func() error { return e.p.WriteListBegin(e.ctx, thrift.STRING, len(l)) })
		for _, s := range l {
			e.do(func() error { return e.p.WriteString(e.ctx, s) })
		}
		e.do(func() error { return e.p.WriteListEnd(e.ctx) })
	})
}

// structList writes a list of n structs; body(i) writes the fields of the
// i-th one.
func (e *enc) structList(id int16, n int, body func(i int)) {
	e.field(id, thrift.LIST, func() {
		e.do(func() error { return e.p.WriteListBegin(e.ctx, thrift.STRUCT, n) })
		for i := range n {
			e.structBody(func() { body(i) })
		}
		e.do(func() error { return e.p.WriteListEnd(e.ctx) })
	})
}

// structField writes a struct-typed field whose fields body writes.
func (e *enc) structField(id int16, body func()) {
	e.field(id, thrift.STRUCT, func() { e.structBody(body) })
}

// readStruct reads one struct, handing each field to f, which returns
// false for fields it does not read (they are skipped).
func readStruct(ctx context.Context, p thrift.TProtocol, f func(id int16, t thrift.TType) (bool, error)) error {
	if _, err := p.ReadStructBegin(ctx); err != nil {
		return err
	}
	for {
		_, t, id, err := p.ReadFieldBegin(ctx)
		if err != nil {
			return err
		}
		if t == thrift.STOP {
			break
		}
		read, err := f(id, t)
		if err != nil {
			return err
		}
		if !read {
			if err := p.Skip(ctx, t); err != nil {
				return err
			}
		}
		if err := p.ReadFieldEnd(ctx); err != nil {
			return err
		}
	}
	return p.ReadStructEnd(ctx)
}

func readStrMap(ctx context.Context, p thrift.TProtocol) (map[string]string, error) {
	_, _, n, err := p.ReadMapBegin(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, n)
	for range n {
		k, err := p.ReadString(ctx)
		if err != nil {
			return nil, err
		}
		v, err := p.ReadString(ctx)
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, p.ReadMapEnd(ctx)
}

// readStructList reads a list of structs, calling elem for each.
func readStructList(ctx context.Context, p thrift.TProtocol, elem func() error) error {
	_, n, err := p.ReadListBegin(ctx)
	if err != nil {
		return err
	}
	for range n {
		if err := elem(); err != nil {
			return err
		}
	}
	return p.ReadListEnd(ctx)
}
