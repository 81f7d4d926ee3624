package dbzgen

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
)

// epochBase anchors random temporal values; any fixed instant would do.
func epochBase() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }

// randomValue returns a value of column type t that Encode accepts.
func randomValue(rng *rand.Rand, t sqlType) any {
	letters := func(n int) string {
		const abc = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ "
		b := make([]byte, n)
		for i := range b {
			b[i] = abc[rng.IntN(len(abc))]
		}
		return string(b)
	}
	someBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}
	upTo := func(limit, cap int) int {
		if limit <= 0 || limit > cap {
			limit = cap
		}
		return 1 + rng.IntN(limit)
	}
	switch t.name {
	case "bit":
		return rng.IntN(2) == 1
	case "tinyint":
		return rng.IntN(256)
	case "smallint":
		return rng.IntN(65536) - 32768
	case "int":
		return rng.Int32N(2_000_000) - 1_000_000
	case "bigint":
		return rng.Int64() >> rng.IntN(40)
	case "real":
		return float32(rng.IntN(1_000_000)) / 64
	case "float":
		if t.precision <= 24 {
			return float32(rng.IntN(1_000_000)) / 64
		}
		return rng.NormFloat64() * 1e6
	case "decimal", "numeric", "money", "smallmoney":
		digits := min(t.precision, 15)
		if t.name == "smallmoney" {
			digits = 9
		}
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil).Int64()
		unscaled := rng.Int64N(limit)
		if rng.IntN(4) == 0 {
			unscaled = -unscaled
		}
		return new(big.Rat).SetFrac(big.NewInt(unscaled), pow10(t.scale))
	case "char", "nchar":
		return letters(upTo(t.length, 20))
	case "varchar", "nvarchar", "text", "ntext":
		return letters(upTo(t.length, 40))
	case "xml":
		return fmt.Sprintf("<v n=\"%d\"/>", rng.IntN(1000))
	case "uniqueidentifier":
		u, _ := uuid.FromBytes(someBytes(16)) // 16 bytes always form a UUID
		return u
	case "binary", "varbinary", "image", "geometry", "geography", "hierarchyid":
		return someBytes(upTo(t.length, 16))
	case "rowversion":
		return someBytes(8)
	case "date":
		return epochBase().AddDate(0, 0, rng.IntN(3650)-1825)
	case "time":
		return time.Duration(rng.Int64N(int64(24 * time.Hour)))
	case "datetime", "smalldatetime", "datetime2":
		return epochBase().Add(time.Duration(rng.Int64N(int64(5 * 365 * 24 * time.Hour))))
	case "datetimeoffset":
		zone := time.FixedZone("", (rng.IntN(105)-48)*15*60) // -12:00 .. +14:00
		return epochBase().Add(time.Duration(rng.Int64N(int64(5 * 365 * 24 * time.Hour)))).In(zone)
	}
	return nil
}

// keyValue returns the i-th (1-based) distinct value of a key column.
func keyValue(i int, t sqlType) (any, error) {
	switch t.name {
	case "tinyint":
		if i > 255 {
			return nil, fmt.Errorf("%w: %d keys do not fit a tinyint key", ErrBadTable, i)
		}
		return i, nil
	case "smallint":
		if i > 32767 {
			return nil, fmt.Errorf("%w: %d keys do not fit a smallint key", ErrBadTable, i)
		}
		return i, nil
	case "int", "bigint":
		return i, nil
	case "decimal", "numeric", "money", "smallmoney":
		return big.NewRat(int64(i), 1), nil
	case "char", "nchar", "varchar", "nvarchar":
		s := fmt.Sprintf("C-%d", i)
		if t.length > 0 && len(s) > t.length {
			return nil, fmt.Errorf("%w: key %q does not fit %s(%d)", ErrBadTable, s, t.name, t.length)
		}
		return s, nil
	case "uniqueidentifier":
		var u uuid.UUID
		u[12], u[13], u[14], u[15] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		return u, nil
	case "date":
		return epochBase().AddDate(0, 0, i), nil
	case "datetime2", "datetime":
		return epochBase().Add(time.Duration(i) * time.Second), nil
	}
	return nil, fmt.Errorf("%w: workload keys of type %s are not supported", ErrBadTable, t.name)
}
