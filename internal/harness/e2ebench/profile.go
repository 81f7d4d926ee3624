package e2ebench

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrProfile is wrapped by the errors ProfileShares returns for a profile it
// cannot read.
var ErrProfile = errors.New("e2ebench: invalid profile")

// Fields of perftools.profiles.Profile (profile.proto) that the shares
// need.
const (
	fieldSampleType  = 1 // Profile.sample_type: ValueType
	fieldSample      = 2 // Profile.sample: Sample
	fieldLocation    = 4 // Profile.location: Location
	fieldFunction    = 5 // Profile.function: Function
	fieldStringTable = 6 // Profile.string_table: string

	fieldValueTypeType = 1 // ValueType.type: string index

	fieldSampleLocation = 1 // Sample.location_id: packed uint64
	fieldSampleValue    = 2 // Sample.value: packed int64

	fieldLocationID   = 1 // Location.id
	fieldLocationLine = 4 // Location.line: Line, innermost inlined first

	fieldLineFunction = 1 // Line.function_id

	fieldFunctionID   = 1 // Function.id
	fieldFunctionName = 2 // Function.name: string index
)

// maxProfileBytes bounds a decompressed profile.
const maxProfileBytes = 1 << 30

// profile is the part of a pprof profile the shares need.
type profile struct {
	valueTypes []int64 // string indexes
	samples    []sample
	locations  map[uint64][]uint64 // location id → function ids
	functions  map[uint64]int64    // function id → name string index
	strs       []string
}

type sample struct {
	locations []uint64
	values    []int64
}

// ProfileShares reads a (gzipped or plain) pprof CPU profile as
// runtime/pprof writes it and returns each category's share of the CPU
// time, classifying every sample by its stack (see Category).
func ProfileShares(data []byte) (map[string]float64, error) {
	p, err := parseProfile(data)
	if err != nil {
		return nil, err
	}
	vi := p.cpuValue()
	// Floats: a sum of int64 nanoseconds could overflow on bad input.
	byCat := make(map[string]float64)
	total := 0.0
	for _, s := range p.samples {
		if vi >= len(s.values) {
			return nil, fmt.Errorf("%w: sample has %d values, want %d", ErrProfile, len(s.values), vi+1)
		}
		v := s.values[vi]
		if v < 0 {
			return nil, fmt.Errorf("%w: negative sample value %d", ErrProfile, v)
		}
		byCat[stackCategory(p.stack(s))] += float64(v)
		total += float64(v)
	}
	shares := make(map[string]float64, len(byCat))
	for _, c := range Categories() {
		shares[c] = 0
		if total > 0 {
			shares[c] = byCat[c] / total
		}
	}
	return shares, nil
}

// cpuValue is the index of the "cpu" value (nanoseconds), else the last.
func (p *profile) cpuValue() int {
	for i, t := range p.valueTypes {
		if t >= 0 && int(t) < len(p.strs) && p.strs[t] == "cpu" {
			return i
		}
	}
	return max(len(p.valueTypes)-1, 0)
}

// stack returns a sample's function names, innermost first.
func (p *profile) stack(s sample) []string {
	var out []string
	for _, loc := range s.locations {
		for _, fn := range p.locations[loc] {
			name := p.functions[fn]
			if name >= 0 && int(name) < len(p.strs) {
				out = append(out, p.strs[name])
			}
		}
	}
	return out
}

func parseProfile(data []byte) (*profile, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrProfile, err)
		}
		// Bounded: a corrupt header must not inflate without end.
		if data, err = io.ReadAll(io.LimitReader(zr, maxProfileBytes)); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrProfile, err)
		}
	}
	p := &profile{locations: map[uint64][]uint64{}, functions: map[uint64]int64{}}
	err := eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fieldSampleType:
			return eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				if num == fieldValueTypeType && typ == protowire.VarintType {
					p.valueTypes = append(p.valueTypes, int64(x))
				}
				return nil
			})
		case fieldSample:
			return p.parseSample(v)
		case fieldLocation:
			return p.parseLocation(v)
		case fieldFunction:
			var id uint64
			var name int64 = -1
			err := eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				switch {
				case num == fieldFunctionID && typ == protowire.VarintType:
					id = x
				case num == fieldFunctionName && typ == protowire.VarintType:
					name = int64(x)
				}
				return nil
			})
			p.functions[id] = name
			return err
		case fieldStringTable:
			p.strs = append(p.strs, string(v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (p *profile) parseSample(b []byte) error {
	var s sample
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case fieldSampleLocation:
			return appendVarints(&s.locations, typ, v, x)
		case fieldSampleValue:
			var vals []uint64
			if err := appendVarints(&vals, typ, v, x); err != nil {
				return err
			}
			for _, u := range vals {
				s.values = append(s.values, int64(u))
			}
		}
		return nil
	})
	p.samples = append(p.samples, s)
	return err
}

func (p *profile) parseLocation(b []byte) error {
	var id uint64
	var fns []uint64
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == fieldLocationID && typ == protowire.VarintType:
			id = x
		case num == fieldLocationLine && typ == protowire.BytesType:
			return eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				if num == fieldLineFunction && typ == protowire.VarintType {
					fns = append(fns, x)
				}
				return nil
			})
		}
		return nil
	})
	p.locations[id] = fns
	return err
}

// appendVarints appends a repeated varint field, packed or not.
func appendVarints(dst *[]uint64, typ protowire.Type, v []byte, x uint64) error {
	switch typ {
	case protowire.VarintType:
		*dst = append(*dst, x)
	case protowire.BytesType:
		for len(v) > 0 {
			u, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return fmt.Errorf("%w: packed varint: %w", ErrProfile, protowire.ParseError(n))
			}
			*dst = append(*dst, u)
			v = v[n:]
		}
	}
	return nil
}

// eachField calls fn for every field of a protobuf message: bytes fields
// with their payload, varint fields with their value; fixed-width fields
// are skipped.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: tag: %w", ErrProfile, protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d: %w", ErrProfile, num, protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.VarintType || typ == protowire.BytesType {
			if err := fn(num, typ, v, x); err != nil {
				return err
			}
		}
	}
	return nil
}
