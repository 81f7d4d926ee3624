package deltalog

import (
	"errors"
	"fmt"
	"strings"
)

// z85Alphabet is ZeroMQ's Z85 alphabet, which Delta uses for DV file ids and inline DVs.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

var errZ85 = errors.New("deltalog: invalid Z85")

// z85Encode encodes data, whose length must be a multiple of 4: each big-endian uint32
// becomes five base-85 digits, most significant first.
func z85Encode(data []byte) (string, error) {
	if len(data)%4 != 0 {
		return "", fmt.Errorf("%w: %d bytes is not a multiple of 4", errZ85, len(data))
	}
	out := make([]byte, 0, len(data)/4*5)
	for i := 0; i < len(data); i += 4 {
		v := uint32(data[i])<<24 | uint32(data[i+1])<<16 | uint32(data[i+2])<<8 | uint32(data[i+3])
		var digits [5]byte
		for j := 4; j >= 0; j-- {
			digits[j] = z85Alphabet[v%85]
			v /= 85
		}
		out = append(out, digits[:]...)
	}
	return string(out), nil
}

// z85Decode reverses z85Encode. It rejects lengths that are not a multiple of 5,
// characters outside the alphabet and groups that overflow 32 bits.
func z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("%w: length %d is not a multiple of 5", errZ85, len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := range 5 {
			d := z85Digit(s[i+j])
			if d < 0 {
				return nil, fmt.Errorf("%w: character %q at %d", errZ85, s[i+j], i+j)
			}
			v = v*85 + uint64(d)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("%w: group at %d overflows 32 bits", errZ85, i)
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, nil
}

func z85Digit(c byte) int { return strings.IndexByte(z85Alphabet, c) }
