//go:build purego || noasm || !(amd64 || arm64)

package asm

// expImpl has no assembly kernel here: Exp is expGeneric throughout.
func expImpl(dst, src []float64) int { return 0 }

// expKernel is never called here (expImpl computes nothing).
func expKernel(dst, src *float64, n int) { panic("asm: no exp kernel") }
