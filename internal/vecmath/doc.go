// Package vecmath holds the vector kernels of solvegp's covariance functions
// and patch extraction, each an assembly kernel per instruction set with a
// pure-Go twin that gives the same bits. Packages gp/kernel, convgp and
// patches import it.
//
// It has strided block copies for im2col (CopyBlock and its variants) and a
// vector exponential, Exp, for kernel
// matrices: AVX2+FMA assembly on amd64 (exp_avx2_amd64.s, hand-written) and
// NEON on arm64, with expGeneric as its bit-identical pure-Go twin, used
// everywhere else. RadialProfile and RadialWeights turn squared distances
// into the covariances of the RBF and Matérn kernels and into the weights
// of their gradients; they are fused AVX2+FMA kernels on amd64
// (radial_avx2_amd64.s, sharing the exponential of exp_avx2_amd64.h) and
// NEON kernels on arm64 (radial_neon_arm64.s), and radialOne and
// radialWeightOne are their pure-Go twins. On AVX-512 machines Exp also has
// an eight-wide kernel (exp_avx512_amd64.s, with the macros it shares in
// exp_avx512_amd64.h).
//
// Two row kernels serve convolutional kernels (package convgp): RBFPairRow
// turns a row of patch inner products into the row's weighted
// squared-exponential sums and gradient pieces, with the exponential in
// registers (pairs_avx512_amd64.s), and KernelGradRow forms a row of a
// kernel matrix's adjoint with its column and location sums
// (gradrow_avx512_amd64.s). Both have AVX-512F and AVX2 assembly
// (pairs_avx2_amd64.s, gradrow_avx2_amd64.s), NEON assembly
// (pairs_neon_arm64.s, gradrow_neon_arm64.s; the exponential and the
// instruction macros shared with radial_neon_arm64.s are in
// exp_neon_arm64.h) and pure-Go twins (rbfPairsGeneric, kernelGradGeneric)
// that give the same bits; elsewhere RBFPairRow runs a blocked Go path
// that calls Exp.
//
// The amd64 block copy kernels (copy_avx2_amd64.s, copy_avx512_amd64.s and
// the slack kernels of CopyBlockSlack in copy_slack_amd64.s) are variants of
// a few shapes that differ in vector width, register names, tail handling
// and whether a run is stored or added, so gen_copy.go generates them. The
// other assembly (copyTiled3AVX512, the NEON copies, Exp, the radial, pair
// and gradient-row kernels) is written by hand.
package vecmath

//go:generate go run gen_copy.go
