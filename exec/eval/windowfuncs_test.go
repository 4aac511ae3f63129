package eval

import "testing"

func TestWindowStart(t *testing.T) {
	for _, tc := range []struct{ ts, size, offset, want int64 }{
		{0, 10, 0, 0},
		{9, 10, 0, 0},
		{10, 10, 0, 10},
		{-1, 10, 0, -10},
		{-10, 10, 0, -10},
		{-11, 10, 0, -20},
		{7, 10, 3, 3},
		{2, 10, 3, -7},
		{13, 10, -7, 13},
	} {
		if got := WindowStart(tc.ts, tc.size, tc.offset); got != tc.want {
			t.Errorf("WindowStart(%d, %d, %d) = %d, want %d", tc.ts, tc.size, tc.offset, got, tc.want)
		}
	}
}
