package gemm

import "github.com/klauspost/cpuid/v2"

// Blocking holds the cache-blocking parameters of the BLIS five-loop GEMM:
// a KC×NC block of packed B is shared by all threads (sized for the last
// level cache), each thread packs an MC×KC block of A (sized for its L2), and
// the KC×NR micro-panel of B stays in L1 while the micro-kernel sweeps the A
// block. MC is a multiple of MR and NC a multiple of NR.
type Blocking struct {
	MC, KC, NC int
}

// Cache sizes assumed when cpuid cannot tell.
const (
	defaultL1 = 32 << 10
	defaultL2 = 512 << 10
	defaultL3 = 8 << 20
)

// cacheSizes reports the per-core L1D and L2 and the L3 sizes in bytes.
func cacheSizes() (l1, l2, l3 int) {
	l1, l2, l3 = cpuid.CPU.Cache.L1D, cpuid.CPU.Cache.L2, cpuid.CPU.Cache.L3
	if l1 <= 0 {
		l1 = defaultL1
	}
	if l2 <= 0 {
		l2 = defaultL2
	}
	if l3 <= 0 {
		l3 = defaultL3
	}
	return l1, l2, l3
}

// blockingFor derives MC, KC and NC for an mr×nr kernel from the cache sizes
// of the running machine.
func blockingFor(mr, nr int) Blocking {
	l1, l2, l3 := cacheSizes()
	return computeBlocking(mr, nr, l1, l2, l3)
}

// computeBlocking is the pure rule behind blockingFor. The micro-kernels
// are compute-bound even when both micro-panels stream from L2, and a long
// inner dimension amortizes the C-tile update, so KC is large:
//   - KC: one A and one B micro-panel, (mr+nr)·KC values, take about an
//     eighth of L2; multiple of 64 in [128, 512];
//   - MC: the MC×KC block of A takes about a third of L2; multiple of mr,
//     at least 2·mr;
//   - NC: the KC×NC block of B takes about a sixteenth of L3 (roughly one
//     core's share of a shared L3; larger blocks measured slower once other
//     processes compete for L3); multiple of nr in [nr, 8192].
//
// On a Zen 4 core (1 MiB L2, 32 MiB L3) this gives KC = 512, MC = 84 and
// NC = 512 for the 14×16 AVX-512 kernel, the best of a measured grid
// (n = 1024 and 2048, per-process CPU time).
func computeBlocking(mr, nr, l1, l2, l3 int) Blocking {
	const f64 = 8
	_ = l1 // the panels stream from L2; L1 only bounds the register tile
	kc := (l2 / 8) / ((mr + nr) * f64)
	kc = clamp(kc&^63, 128, 512)
	mc := (l2 / 3) / (kc * f64)
	mc = max(mc/mr*mr, 2*mr)
	nc := (l3 / 16) / (kc * f64)
	nc = clamp(nc/nr*nr, nr, 8192/nr*nr)
	return Blocking{MC: mc, KC: kc, NC: nc}
}

func clamp(x, lo, hi int) int {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}
