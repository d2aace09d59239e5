package gpbeam

import "math"

// exactSum is the exact sum of a set of float64 values, held as
// non-overlapping partial sums in increasing magnitude (Shewchuk's
// expansion, as in Python's math.fsum). Adding values or merging two sums
// in any order represents the same exact value, and round rounds it
// once, so a sum combined over shards in whatever order a runner chooses
// is the same float64, the correctly rounded sum of all the values.
type exactSum []float64

// add returns the partials of s + x. It may reuse s's storage.
func (s exactSum) add(x float64) exactSum {
	i := 0
	for _, y := range s {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			s[i] = lo
			i++
		}
		x = hi
	}
	return append(s[:i], x)
}

// merge returns the partials of s + t.
func (s exactSum) merge(t exactSum) exactSum {
	for _, x := range t {
		s = s.add(x)
	}
	return s
}

// round returns the float64 nearest the exact sum (ties to even).
func (s exactSum) round() float64 {
	n := len(s)
	if n == 0 {
		return 0
	}
	n--
	hi := s[n]
	var lo float64
	for n > 0 {
		x := hi
		n--
		y := s[n]
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Round half to even correctly when the remaining partials push the
	// exact value off the halfway point that hi + lo rounded on.
	if n > 0 && (lo < 0 && s[n-1] < 0 || lo > 0 && s[n-1] > 0) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}
