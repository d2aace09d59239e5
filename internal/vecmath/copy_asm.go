//go:build !purego && !noasm && (amd64 || arm64)

package vecmath

// Shared glue for the assembly copy kernels (copy_amd64.go, copy_arm64.go).
//
// The kernels take the block geometry as "carry" strides in bytes: after the
// last run of a level the pointer has advanced n*stride, and the carry stride
// moves it on to the first run of the next outer level.

type copyKernel func(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyCall runs an assembly kernel on a geometry already validated by
// copyCheck (all counts positive, both slices long enough).
func copyCall(k copyKernel, dst, src []float64, g *CopyGeom) {
	s0, s1, s2 := copyCarry(g.N, g.SrcStride)
	d0, d1, d2 := copyCarry(g.N, g.DstStride)
	k(&dst[0], &src[0], g.Run, g.N[0], g.N[1], g.N[2], s0, s1, s2, d0, d1, d2)
}

// copyCarry converts element strides to byte carry strides.
func copyCarry(n, s [3]int) (c0, c1, c2 int) {
	return 8 * s[0], 8 * (s[1] - n[0]*s[0]), 8 * (s[2] - n[1]*s[1])
}
