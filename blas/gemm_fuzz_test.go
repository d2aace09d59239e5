package blas

import (
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/internal/gemm"
)

// FuzzDgemm compares Dgemm with gonum (through dgemmCheck: element-wise
// error bound, guards around C, A and B untouched) on fuzzer-chosen shapes,
// transposes, scalars, backends, blockings and thread counts.
//
//	go test -run XXX -fuzz FuzzDgemm -fuzztime 30s ./blas
func FuzzDgemm(f *testing.F) {
	f.Add(uint8(5), uint8(7), uint8(3), uint8(0), uint8(0), uint8(1), uint64(1))
	f.Add(uint8(15), uint8(17), uint8(33), uint8(1), uint8(2), uint8(2), uint64(2))
	f.Add(uint8(1), uint8(64), uint8(9), uint8(2), uint8(5), uint8(3), uint64(3))
	f.Fuzz(func(t *testing.T, m, n, k, trans, scal, conf uint8, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, uint64(m)<<16|uint64(n)<<8|uint64(k)))
		tA := gemmTrans[int(trans)%3]
		tB := gemmTrans[int(trans/3)%3]
		alpha := []float64{1, -0.5, 0, 2.25}[scal%4]
		beta := []float64{0, 1, -1.5, 0.5}[(scal/4)%4]
		bs := gemm.Backends()
		be := bs[int(conf)%len(bs)]
		if conf&0x10 != 0 {
			be = be.WithBlocking(gemm.Blocking{MC: 1 + int(conf>>5), KC: 1 + int(seed%17), NC: 1 + int(seed>>8)%40})
		}
		impl := Implementation{backend: be, Threads: 1 + int(conf>>2)%3}
		dgemmCheck(t, rng, impl, tA, tB, int(m)%97, int(n)%97, int(k)%97, alpha, beta)
	})
}
