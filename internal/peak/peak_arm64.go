//go:build !purego && !noasm

package peak

// fmaNEON runs n iterations of 24 FMLA on independent 128-bit accumulators
// (peak_arm64.s); its Go twin:
//
//	for range n {
//		for j := range 24 { acc[j] = x*y + acc[j] } // 2 lanes each
//	}
//
//go:noescape
func fmaNEON(n int)

func archUnits() []Unit {
	return []Unit{{Name: "neon", Flops: 2 * 24 * 2, loop: fmaNEON}}
}
