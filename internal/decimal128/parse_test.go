package decimal128_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cdc2delta/cdc2delta/internal/decimal128"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in               string
		precision, scale int
		want             decimal128.Num
		wantErr          error
	}{
		{in: "1.5", precision: 38, scale: 3, want: decimal128.FromInt64(1500)},
		{in: "+7", precision: 38, scale: 0, want: decimal128.FromInt64(7)},
		{in: ".5", precision: 38, scale: 1, want: decimal128.FromInt64(5)},
		{in: "-.5", precision: 38, scale: 1, want: decimal128.FromInt64(-5)},
		{in: "5.", precision: 38, scale: 0, want: decimal128.FromInt64(5)},
		{in: "1.2300", precision: 38, scale: 2, want: decimal128.FromInt64(123)},
		{in: "1.50", precision: 3, scale: 1, want: decimal128.FromInt64(15)}, // trailing zeros beyond the scale
		{in: "000123", precision: 3, scale: 0, want: decimal128.FromInt64(123)},
		{in: "1.234", precision: 38, scale: 2, wantErr: decimal128.ErrRange},
		{in: "1234", precision: 3, scale: 2, wantErr: decimal128.ErrRange},
		{in: "999999999999999999999999999999999999999999", precision: 38, scale: 0, wantErr: decimal128.ErrRange},
		{in: "1e3", precision: 38, scale: 0, wantErr: decimal128.ErrSyntax},
		{in: "abc", precision: 3, scale: 2, wantErr: decimal128.ErrSyntax},
		{in: "", precision: 38, scale: 0, wantErr: decimal128.ErrSyntax},
		{in: "-", precision: 38, scale: 0, wantErr: decimal128.ErrSyntax},
		{in: "1.2.3", precision: 38, scale: 3, wantErr: decimal128.ErrSyntax},
		{in: "-+5", precision: 38, scale: 0, wantErr: decimal128.ErrSyntax},
		{in: " 5", precision: 38, scale: 0, wantErr: decimal128.ErrSyntax},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := decimal128.Parse(tc.in, tc.precision, tc.scale)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
