//go:build purego || noasm || !(amd64 || arm64)

package vecmath

// expKernelOK: there is no assembly kernel here, so Exp is expGeneric
// throughout.
const expKernelOK = false

// expKernel is never called here (expKernelOK is false).
func expKernel(dst, src []float64) { panic("vecmath: no exp kernel") }

// expKernelInRange is never called here (expKernelOK is false).
func expKernelInRange(dst, src []float64) int { panic("vecmath: no exp kernel") }
