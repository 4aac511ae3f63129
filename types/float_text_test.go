package types

import (
	"math"
	"testing"
)

// TestAppendFloat checks float output against PostgreSQL 15's (with the
// default extra_float_digits = 1): real switches to exponential notation
// from 1e6, double precision from 1e15, both below 1e-4.
func TestAppendFloat(t *testing.T) {
	for _, tc := range []struct {
		f       float64
		bitSize int
		want    string
	}{
		{999999, 32, "999999"},
		{1e6, 32, "1e+06"},
		{1234567, 32, "1.234567e+06"},
		{-1234567, 32, "-1.234567e+06"},
		{12345678, 32, "1.2345678e+07"},
		{float64(float32(123456789.123)), 32, "1.2345679e+08"},
		{123456, 32, "123456"},
		{0.0001, 32, "0.0001"},
		{float64(float32(0.00001)), 32, "1e-05"},
		{float64(float32(3.4e38)), 32, "3.4e+38"},
		{float64(float32(0.1)), 32, "0.1"},
		{1.5, 32, "1.5"},
		{123456789012345, 64, "123456789012345"},
		{1e15, 64, "1e+15"},
		{1234567890123456, 64, "1.234567890123456e+15"},
		{0.0001, 64, "0.0001"},
		{0.00001, 64, "1e-05"},
		{math.Copysign(0, -1), 64, "-0"},
		{math.Inf(-1), 32, "-Infinity"},
	} {
		if got := string(AppendFloat(nil, tc.f, tc.bitSize)); got != tc.want {
			t.Errorf("AppendFloat(%v, %d) = %s, want %s", tc.f, tc.bitSize, got, tc.want)
		}
		if got := string(appendFloat(nil, tc.f, tc.bitSize)); got != tc.want {
			t.Errorf("appendFloat(%v, %d) = %s, want %s", tc.f, tc.bitSize, got, tc.want)
		}
	}
}
