package faultstore

import (
	"errors"
	"path"
	"time"
)

// ErrInjected is the error an injected fault returns when its Fault.Err is nil.
var ErrInjected = errors.New("faultstore: injected fault")

// Op is a set of Store operations, used to aim a Fault.
type Op uint8

// The operations a Fault can target. Combine them with |.
const (
	OpGet Op = 1 << iota
	OpPut
	OpPutIfAbsent
	OpList
	OpDelete

	// OpWrite is both kinds of write.
	OpWrite = OpPut | OpPutIfAbsent
	// OpAll is every operation.
	OpAll = OpGet | OpWrite | OpList | OpDelete
)

// Fault describes one injected misbehaviour. The zero Fault fails every call with
// ErrInjected before it reaches the wrapped store.
type Fault struct {
	// Ops are the operations the fault applies to; zero means OpAll.
	Ops Op
	// Pattern is a path.Match glob matched against the object path (the prefix for
	// List); empty matches everything. A malformed pattern matches nothing.
	Pattern string
	// Nth makes the fault fire only on the Nth matching call (1-based); zero fires on
	// every matching call.
	Nth int
	// Delay is added before the operation runs, ending early if the context is done.
	Delay time.Duration
	// DelayOnly makes the fault add Delay and then let the call proceed normally.
	DelayOnly bool
	// Err is the error the call returns; nil means ErrInjected.
	Err error
	// AfterWrite passes a Put or PutIfAbsent to the wrapped store first and then returns
	// Err, like a response lost after the object became durable. A write the wrapped
	// store refused returns the store's error instead.
	AfterWrite bool
	// Then, if set, runs each time the fault takes effect (after the write for AfterWrite;
	// not when the wrapped store refused that write),
	// without the wrapper's lock held.
	Then func()
}

func (f *Fault) err() error {
	if f.Err != nil {
		return f.Err
	}
	return ErrInjected
}

// Injection is a Fault installed in a Store.
type Injection struct {
	fault   Fault
	matched int // matching calls seen; guarded by the store's mutex
	fired   int // times the fault fired; guarded by the store's mutex
	removed bool
	s       *Store
}

// Fired reports how many times the fault has fired.
func (in *Injection) Fired() int {
	in.s.mu.Lock()
	defer in.s.mu.Unlock()
	return in.fired
}

// Remove uninstalls the fault. Calls already past their fault check are not affected.
func (in *Injection) Remove() {
	in.s.mu.Lock()
	defer in.s.mu.Unlock()
	in.removed = true
}

// matchLocked counts a call and reports whether the fault fires for it.
func (in *Injection) matchLocked(op Op, p string) bool {
	if in.removed {
		return false
	}
	ops := in.fault.Ops
	if ops == 0 {
		ops = OpAll
	}
	if ops&op == 0 {
		return false
	}
	if in.fault.Pattern != "" {
		if ok, err := path.Match(in.fault.Pattern, p); err != nil || !ok {
			return false
		}
	}
	in.matched++
	if in.fault.Nth != 0 && in.matched != in.fault.Nth {
		return false
	}
	in.fired++
	return true
}

// String names the operations in o, for error messages.
func (o Op) String() string {
	names := []struct {
		op   Op
		name string
	}{{OpGet, "get"}, {OpPut, "put"}, {OpPutIfAbsent, "put-if-absent"}, {OpList, "list"}, {OpDelete, "delete"}}
	var s string
	for _, n := range names {
		if o&n.op != 0 {
			if s != "" {
				s += "|"
			}
			s += n.name
		}
	}
	if s == "" {
		return "none"
	}
	return s
}
