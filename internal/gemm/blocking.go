package gemm

// Blocking holds the cache-blocking parameters of the BLIS five-loop GEMM:
// a KC×NC block of packed B is shared by all threads (sized for the last
// level cache), each thread packs an MC×KC block of A (sized for its L2), and
// the KC×NR micro-panel of B stays in L1 while the micro-kernel sweeps the A
// block. MC is a multiple of MR and NC a multiple of NR.
type Blocking struct {
	MC, KC, NC int
}

// analyticBlocking derives MC, KC and NC for an mr×nr micro-kernel from
// the cache geometry c, by the analytical model of Low, Igual, Smith and
// Quintana-Ortí ("Analytical modeling is enough for high-performance BLIS",
// ACM TOMS 43(2), 2016), with 64-byte lines and 8-byte elements:
//
//   - KC: the KC×NR micro-panel of B stays in L1 while MR×KC micro-panels
//     of A stream through it. Of the L1's W1−1 ways not needed by the C
//     tile's lines, A takes CA = ⌊(W1−1)/(1+NR/MR)⌋ and B the other
//     CB = W1−1−CA, so KC = CB·S1/(W1·NR·8), S1 the L1 size.
//   - MC: the MC×KC block of A stays in L2 next to one B micro-panel, which
//     takes ⌈NR·KC·8·W2/S2⌉ ways; A gets the rest but one, so
//     MC = CA2·S2/(W2·KC·8), rounded down to a multiple of MR.
//   - NC: the KC×NC block of B stays in L3 next to one A block likewise;
//     without an L3 (or when NC would exceed it) NC is capped at 4096.
//
// KC is rounded down to a multiple of 8 (a cache line of the packed
// panels). Every result is at least one tile.
func analyticBlocking(mr, nr int, c caches) Blocking {
	const f64, line = 8, 64
	ways := func(l cacheLevel) int { return max(l.ways, 2) }
	sets := func(l cacheLevel) int { return max(l.size/(ways(l)*line), 1) }
	w1 := ways(c.l1)
	ca := (w1 - 1) * mr / (mr + nr)
	cb := max(w1-1-ca, 1)
	kc := cb * sets(c.l1) * line / (nr * f64)
	kc = max(kc/8*8, 8)

	w2 := ways(c.l2)
	bWays := ceilDiv(nr*kc*f64, sets(c.l2)*line)
	mc := max(w2-1-bWays, 1) * sets(c.l2) * line / (kc * f64)
	mc = max(mc/mr*mr, mr)

	nc := 4096
	if c.l3.size > 0 {
		w3 := ways(c.l3)
		aWays := ceilDiv(mc*kc*f64, sets(c.l3)*line)
		nc = min(max(w3-1-aWays, 1)*sets(c.l3)*line/(kc*f64), nc)
	}
	nc = max(nc/nr*nr, nr)
	return Blocking{MC: mc, KC: kc, NC: nc}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
