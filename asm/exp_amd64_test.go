//go:build !purego && !noasm

package asm

func hasExpAVX2() bool { return useExpAVX2 }

func callExpAVX2(dst, src []float64) { expAVX2(&dst[0], &src[0], len(src)) }
