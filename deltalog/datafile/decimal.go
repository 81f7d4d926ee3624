package datafile

import "math/big"

// decimalBytes is the FIXED_LEN_BYTE_ARRAY length Spark uses for a precision: the
// smallest n with 2^(8n-1) > 10^precision.
func decimalBytes(precision int) int {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(precision)), nil)
	for n := 1; ; n++ {
		if new(big.Int).Lsh(big.NewInt(1), uint(8*n-1)).Cmp(limit) >= 0 {
			return n
		}
	}
}
