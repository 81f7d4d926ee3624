package codecs

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func mustLSN(t *testing.T, s string) LSN {
	t.Helper()
	l, err := ParseLSN(s)
	require.NoError(t, err)
	return l
}

func TestParseLSN(t *testing.T) {
	tests := []struct {
		in      string
		want    LSN
		wantErr bool
	}{
		{in: "0000002b:00000d98:0002", want: LSN{0, 0, 0, 0x2b, 0, 0, 0x0d, 0x98, 0, 2}},
		{in: "FFFFFFFF:FFFFFFFF:FFFF", want: LSN{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{in: "0000002b:00000d98:002", wantErr: true},
		{in: "0000002b-00000d98-0002", wantErr: true},
		{in: "0000002g:00000d98:0002", wantErr: true},
		{in: "NULL", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseLSN(tc.in)
			if tc.wantErr {
				require.ErrorIs(t, err, ErrBadEnvelope)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	require.Equal(t, "0000002b:00000d98:0002", mustLSN(t, "0000002B:00000D98:0002").String())
	require.Empty(t, LSN{}.String())
}

func TestPositionOrder(t *testing.T) {
	// Brief §2.4: commit LSN, then change LSN (null lowest), then serial
	// (null lowest). Listed in ascending order.
	ordered := []Position{
		{}, // nothing known
		{Commit: mustLSN(t, "0000002b:00000d98:0002")},                                                                // snapshot r
		{Commit: mustLSN(t, "0000002b:00000d98:0002"), Change: mustLSN(t, "0000002b:00000d90:0001"), Serial: 1},       // streaming, same commit
		{Commit: mustLSN(t, "0000002b:00000e10:0005"), Change: mustLSN(t, "0000002b:00000e10:0003"), Serial: 1},       // next transaction
		{Commit: mustLSN(t, "0000002b:00000e10:0005"), Change: mustLSN(t, "0000002b:00000e10:0003"), Serial: 2},       // PK-update c after d
		{Commit: mustLSN(t, "0000002b:00000e10:0005"), Change: mustLSN(t, "0000002b:00000e10:0004"), Serial: 1},       // later change, lower serial
		{Commit: mustLSN(t, "0000002c:00000000:0001"), Change: mustLSN(t, "00000000:00000000:0001"), Serial: 1},       // commit dominates change
		{Commit: mustLSN(t, "ffffffff:ffffffff:ffff"), Change: mustLSN(t, "ffffffff:ffffffff:ffff"), Serial: 1 << 62}, // max
	}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			require.Equal(t, want, ordered[i].Compare(ordered[j]), "%d vs %d", i, j)
			bi, bj := ordered[i].AppendBinary(nil), ordered[j].AppendBinary(nil)
			require.Equal(t, want, bytes.Compare(bi, bj), "binary order %d vs %d", i, j)
			require.Equal(t, want, strings.Compare(ordered[i].Hex(), ordered[j].Hex()), "hex order %d vs %d", i, j)
		}
	}
}

func TestPositionRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var p Position
		for i := range p.Commit {
			p.Commit[i] = byte(r.IntN(3)) // small alphabet makes equal prefixes common
			p.Change[i] = byte(r.IntN(3))
		}
		if r.IntN(4) == 0 {
			p.Change = LSN{}
		}
		p.Serial = int64(r.IntN(4))
		s, err := ParsePosition(p.String())
		require.NoError(t, err)
		require.Equal(t, p, s)
		b, err := PositionFromBinary(p.AppendBinary(nil))
		require.NoError(t, err)
		require.Equal(t, p, b)
		h, err := PositionFromHex(p.Hex())
		require.NoError(t, err)
		require.Equal(t, p, h)
	}
	for _, bad := range []string{"", "a/b", "0000002b:00000d98:0002//x", "//-1", "x//"} {
		_, err := ParsePosition(bad)
		require.Error(t, err, bad)
	}
	_, err := PositionFromBinary(make([]byte, 27))
	require.Error(t, err)
	_, err = PositionFromHex("zz")
	require.Error(t, err)
	_, err = PositionFromHex(strings.Repeat("g", PositionHexLen))
	require.Error(t, err)
}

// Hex is on every row image's path: one allocation, the string.
func TestPositionHexAllocatesOnce(t *testing.T) {
	p := Position{Serial: 42}
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _ = p.Hex() }))
	require.Len(t, p.Hex(), PositionHexLen)
}

// TestPositionAppendTexts pins the append forms to the notations they
// replace: fmt's %X/%X for PostgreSQL, the dotted hex of SQL Server LSNs,
// decimal for MySQL, and Hex, on random positions of every source.
func TestPositionAppendTexts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 3000 {
		var p Position
		switch i % 3 {
		case 0:
			for j := range p.Commit {
				p.Commit[j], p.Change[j] = byte(rng.Uint32()), byte(rng.Uint32())
			}
			if i%7 == 0 {
				p.Change = LSN{}
			}
		case 1:
			p.Commit, p.Change = taggedUint(tagPostgres, rng.Uint64()>>rng.IntN(64)), taggedUint(0, rng.Uint64()>>rng.IntN(64))
			if i%5 == 0 {
				p.Commit = taggedUint(tagPostgres, 0)
			}
		case 2:
			p.Commit, p.Change = taggedUint(tagMySQL, rng.Uint64()>>rng.IntN(64)), taggedUint(0, rng.Uint64()>>rng.IntN(64))
		}
		p.Serial = rng.Int64N(1 << 40)
		var commit, change string
		switch p.Source() {
		case SourcePostgres:
			if v := p.Commit.low64(); v != 0 {
				commit = fmt.Sprintf("%X/%X", v>>32, v&0xffffffff)
			}
			v := p.Change.low64()
			change = fmt.Sprintf("%X/%X", v>>32, v&0xffffffff)
		case SourceMySQL:
			commit, change = strconv.FormatUint(p.Commit.low64(), 10), strconv.FormatUint(p.Change.low64(), 10)
		default:
			for _, l := range []LSN{p.Commit, p.Change} {
				s := ""
				if !l.IsZero() {
					h := hex.EncodeToString(l[:])
					s = h[0:8] + ":" + h[8:16] + ":" + h[16:20]
				}
				if l == p.Commit {
					commit = s
				}
				if l == p.Change {
					change = s
				}
			}
		}
		require.Equal(t, commit, p.CommitText(), "%x", p.Commit)
		require.Equal(t, change, p.ChangeText(), "%x", p.Change)
		require.Equal(t, "x"+commit, string(p.AppendCommitText([]byte("x"))))
		require.Equal(t, "x"+change, string(p.AppendChangeText([]byte("x"))))
		require.Equal(t, "x"+p.Hex(), string(p.AppendHex([]byte("x"))))
	}
}
