//go:build !purego && !noasm

package peak

import "golang.org/x/sys/cpu"

// fmaAVX512 runs n iterations of 24 VFMADD231PD on independent 512-bit
// accumulators (peak_amd64.s); its Go twin:
//
//	for range n {
//		for j := range 24 { acc[j] = x*y + acc[j] } // 8 lanes each
//	}
//
//go:noescape
func fmaAVX512(n int)

// fmaAVX2 runs n iterations of 12 VFMADD231PD on independent 256-bit
// accumulators (peak_amd64.s): the loop of fmaAVX512 with 12 accumulators of
// 4 lanes.
//
//go:noescape
func fmaAVX2(n int)

func archUnits() []Unit {
	var us []Unit
	if cpu.X86.HasAVX512F {
		us = append(us, Unit{Name: "avx512", Flops: 2 * 24 * 8, loop: fmaAVX512})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		us = append(us, Unit{Name: "avx2", Flops: 2 * 12 * 4, loop: fmaAVX2})
	}
	return us
}
