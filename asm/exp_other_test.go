//go:build purego || noasm || !amd64

package asm

func hasExpAVX2() bool { return false }

func callExpAVX2(dst, src []float64) { panic("no AVX2 exp kernel") }
