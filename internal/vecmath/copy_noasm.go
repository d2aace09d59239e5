//go:build purego || noasm || !(amd64 || arm64)

package vecmath

// Without assembly (purego or noasm build tags, or an architecture without
// SIMD kernels) the copy kernels are the pure-Go ones.

var copyBackend = "generic"

var copyImpls = []copyImpl{copyGenericImpl}

func copyBlockImpl(dst, src []float64, g *CopyGeom)      { copyBlockGeneric(dst, src, g) }
func copyBlockSlackImpl(dst, src []float64, g *CopyGeom) { copyBlockGeneric(dst, src, g) }
func copyBlockAddImpl(dst, src []float64, g *CopyGeom)   { copyBlockAddGeneric(dst, src, g) }
func copyStreamImpl(dst, src []float64)                  { copyStreamGeneric(dst, src) }
