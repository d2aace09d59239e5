package collapsed

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
)

// denseBlockTerm returns Σ_b log|I + C_b/σ²| over the blocks of size
// `size` in BlockOrder(x, size), with C = K_ff − K_fw·K_ww⁻¹·K_wf formed
// densely.
func denseBlockTerm(t *testing.T, k kernel.Kernel, w, x *mat.Dense, s float64, size int) float64 {
	t.Helper()
	order, err := BlockOrder(x, size)
	if err != nil {
		t.Fatal(err)
	}
	kwf := kmat(k, w, x)
	c := sub(kmat(k, x, x), mul(kwf.T(), mul(inv(kmat(k, w, w)), kwf)))
	var sum float64
	for b0 := 0; b0 < len(order); b0 += size {
		idx := order[b0:min(b0+size, len(order))]
		cb := mat.NewDense(len(idx), len(idx), nil)
		for i, r := range idx {
			for j, q := range idx {
				cb.Set(i, j, c.At(r, q)/s)
			}
			cb.Set(i, i, cb.At(i, i)+1)
		}
		sum += logDet(cb)
	}
	return sum
}

func boundOf(t *testing.T, k kernel.Kernel, s float64, z, o, x *mat.Dense, y []float64, opts Options) float64 {
	t.Helper()
	md, err := New(k, newNoise(t, s), z, o, opts)
	if err != nil {
		t.Fatal(err)
	}
	f, err := md.Bound(x, y)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBlockDiagSizeOneIsTighter: blocks of one point give the Tighter
// bound and its gradient, to rounding, for SGPR and SOLVE-GP, in one chunk
// and in several.
func TestBlockDiagSizeOneIsTighter(t *testing.T) {
	x, y := toyData(33, 41)
	rng := rand.New(rand.NewPCG(41, 41))
	z := randMat(rng, 5, 2, 1)
	o := randMat(rng, 3, 2, 1)
	k := newKernel(t, 0.8, 1.3)
	for _, oo := range []*mat.Dense{nil, o} {
		for _, chunk := range []int{0, 7} {
			ti, err := New(k, newNoise(t, 0.07), z, oo, Options{Bound: Tighter, ChunkSize: chunk})
			if err != nil {
				t.Fatal(err)
			}
			bd, err := New(k, newNoise(t, 0.07), z, oo, Options{Bound: BlockDiagonal, BlockSize: 1, ChunkSize: chunk})
			if err != nil {
				t.Fatal(err)
			}
			g1, g2 := make([]float64, ti.NumParams()), make([]float64, bd.NumParams())
			f1, err1 := ti.BoundGrad(x, y, g1)
			f2, err2 := bd.BoundGrad(x, y, g2)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if math.Abs(f1-f2) > 1e-12*math.Abs(f1) {
				t.Errorf("O %v chunk %d: Tighter %v, blockdiag(1) %v", oo != nil, chunk, f1, f2)
			}
			for i := range g1 {
				if math.Abs(g1[i]-g2[i]) > 1e-9*math.Max(1, math.Abs(g1[i])) {
					t.Errorf("O %v chunk %d: gradient %d: Tighter %v, blockdiag(1) %v", oo != nil, chunk, i, g1[i], g2[i])
				}
			}
		}
	}
}

// TestBlockDiagSGPRMatchesDense checks the BlockDiagonal SGPR bound
// against log N(y | 0, Q_ff + σ²I) − ½·Σ_b log|I + C_b/σ²| formed
// densely, on random problems and block sizes that do and do not divide N
// (and exceed it), the order Standard ≤ Tighter ≤ BlockDiagonal ≤ one
// block ≤ exact, and equality with the exact log marginal likelihood when
// Z = X.
func TestBlockDiagSGPRMatchesDense(t *testing.T) {
	for trial := range 4 {
		x, y := toyData(35, uint64(50+trial))
		rng := rand.New(rand.NewPCG(uint64(50+trial), 5))
		z := randMat(rng, 3+trial, 2, 1)
		k := newKernel(t, 0.5+0.3*float64(trial), 1.4)
		for _, s := range []float64{0.01, 0.1, 1} {
			kuf := kmat(k, z, x)
			q := mul(kuf.T(), mul(inv(kmat(k, z, z)), kuf))
			zero := make([]float64, len(y))
			exact := logNormal(y, zero, addDiag(kmat(k, x, x), s))
			std := boundOf(t, k, s, z, nil, x, y, Options{})
			tighter := boundOf(t, k, s, z, nil, x, y, Options{Bound: Tighter})
			whole := boundOf(t, k, s, z, nil, x, y, Options{Bound: BlockDiagonal, BlockSize: 35})
			for _, size := range []int{2, 5, 8, 35, 50} {
				want := logNormal(y, zero, addDiag(q, s)) - 0.5*denseBlockTerm(t, k, z, x, s, size)
				for _, chunk := range []int{0, 7} {
					got := boundOf(t, k, s, z, nil, x, y, Options{Bound: BlockDiagonal, BlockSize: size, ChunkSize: chunk})
					if math.Abs(got-want) > 1e-9*math.Abs(want) {
						t.Errorf("trial %d noise %g size %d chunk %d: blockdiag %v, dense %v", trial, s, size, chunk, got, want)
					}
					if !(std < tighter && tighter < got && got <= whole*(1-1e-12) && whole < exact) && size < 35 {
						t.Errorf("trial %d noise %g size %d: want Standard %v < Tighter %v < blockdiag %v ≤ one block %v < exact %v",
							trial, s, size, std, tighter, got, whole, exact)
					}
				}
			}
		}
	}
	x, y := toyData(20, 59)
	k := newKernel(t, 0.9, 1.1)
	for _, s := range []float64{0.05, 0.5} {
		exact := logNormal(y, make([]float64, len(y)), addDiag(kmat(k, x, x), s))
		got := boundOf(t, k, s, x, nil, x, y, Options{Bound: BlockDiagonal, BlockSize: 6})
		if math.Abs(got-exact) > 1e-7*math.Abs(exact) {
			t.Errorf("noise %g, Z = X: blockdiag %v, exact %v", s, got, exact)
		}
	}
}

// TestBlockDiagSolveGP checks the collapsed SOLVE-GP BlockDiagonal bound:
// it is the Standard bound plus Σ_b [tr C_b/(2σ²) − ½·log|I + C_b/σ²|]
// with C the residual after Z and O together, lies between Tighter and the
// exact log marginal likelihood, and with O far from the data equals the
// BlockDiagonal SGPR bound on Z.
func TestBlockDiagSolveGP(t *testing.T) {
	x, y := toyData(36, 62)
	rng := rand.New(rand.NewPCG(62, 62))
	z := randMat(rng, 4, 2, 1)
	o := randMat(rng, 5, 2, 1)
	k := newKernel(t, 0.8, 1.2)
	w := stackRows(z, o)
	var trC float64
	for _, d := range residualDiag(k, w, x) {
		trC += d
	}
	for _, s := range []float64{0.02, 0.3} {
		exact := logNormal(y, make([]float64, len(y)), addDiag(kmat(k, x, x), s))
		for _, size := range []int{4, 7} {
			for _, chunk := range []int{0, 9} {
				std, tighter := bounds(t, k, s, z, o, x, y, chunk)
				got := boundOf(t, k, s, z, o, x, y, Options{Bound: BlockDiagonal, BlockSize: size, ChunkSize: chunk})
				want := std + trC/(2*s) - 0.5*denseBlockTerm(t, k, w, x, s, size)
				if math.Abs(got-want) > 1e-9*math.Abs(want) {
					t.Errorf("noise %g size %d chunk %d: blockdiag %v, dense %v", s, size, chunk, got, want)
				}
				if !(tighter < got && got < exact) {
					t.Errorf("noise %g size %d: want Tighter %v < blockdiag %v < exact %v", s, size, tighter, got, exact)
				}
			}
		}
		far := mat.NewDense(3, 2, []float64{60, 60, 70, -60, -80, 65})
		opts := Options{Bound: BlockDiagonal, BlockSize: 5}
		solve, sgpr := boundOf(t, k, s, z, far, x, y, opts), boundOf(t, k, s, z, nil, x, y, opts)
		if math.Abs(solve-sgpr) > 1e-10*math.Abs(sgpr) {
			t.Errorf("noise %g: SOLVE-GP with a far O %v, SGPR on Z %v", s, solve, sgpr)
		}
	}
}

// TestBlockDiagGradients checks every gradient entry (kernel, noise, Z, O,
// mean) of the BlockDiagonal bound against central finite differences,
// with uneven last blocks, chunks of several blocks, a block larger than
// the data, fixed inducing inputs, a Matérn kernel and a mean function.
func TestBlockDiagGradients(t *testing.T) {
	x, y := toyData(30, 63)
	rng := rand.New(rand.NewPCG(63, 63))
	z := randMat(rng, 4, 2, 1)
	o := randMat(rng, 3, 2, 1)
	for _, c := range []struct {
		name        string
		o           *mat.Dense
		size, chunk int
		s           float64
	}{{"SGPR", nil, 4, 0, 0.05}, {"SGPR chunked", nil, 3, 8, 0.05}, {"SGPR small noise", nil, 7, 0, 0.003},
		{"SGPR one block", nil, 40, 0, 0.1}, {"SOLVE-GP", o, 4, 0, 0.05}, {"SOLVE-GP chunked", o, 4, 9, 0.2},
		{"SOLVE-GP size 1", o, 1, 0, 0.05}} {
		t.Run(c.name, func(t *testing.T) {
			md, err := New(newKernel(t, 0.9, 1.2), newNoise(t, c.s), z, c.o,
				Options{Bound: BlockDiagonal, BlockSize: c.size, ChunkSize: c.chunk})
			if err != nil {
				t.Fatal(err)
			}
			checkGrad(t, md, x, y)
		})
	}
	k, _ := kernel.NewMatern32(2, 1.1, 0.8)
	md, err := New(k, newNoise(t, 0.2), z, o, Options{Bound: BlockDiagonal, BlockSize: 6, FixInducing: true})
	if err != nil {
		t.Fatal(err)
	}
	checkGrad(t, md, x, y)
	ym := append([]float64(nil), y...)
	for i := range ym {
		ym[i] += 2 + x.At(i, 0)
	}
	for _, oo := range []*mat.Dense{nil, o} {
		md, err := New(newKernel(t, 0.9, 1.2), newNoise(t, 0.05), z, oo,
			Options{Bound: BlockDiagonal, BlockSize: 4, ChunkSize: 8, Mean: testMean(t, "linear")})
		if err != nil {
			t.Fatal(err)
		}
		checkGrad(t, md, x, ym)
	}
}

// TestBlockOrder checks that BlockOrder returns a permutation, the same one
// on every call, that its first split separates the inputs along their
// widest coordinate, and that it rejects bad arguments.
func TestBlockOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(64, 64))
	x := randMat(rng, 23, 3, 1)
	for i := 0; i < 23; i++ {
		x.Set(i, 1, 10*x.At(i, 1)) // the widest coordinate
	}
	for _, size := range []int{1, 4, 5, 23, 30} {
		order, err := BlockOrder(x, size)
		if err != nil {
			t.Fatal(err)
		}
		sorted := slices.Clone(order)
		slices.Sort(sorted)
		for i, v := range sorted {
			if v != i {
				t.Fatalf("size %d: order %v is not a permutation", size, order)
			}
		}
		again, _ := BlockOrder(x, size)
		if !slices.Equal(order, again) {
			t.Errorf("size %d: two calls gave %v and %v", size, order, again)
		}
		blocks := (23 + size - 1) / size
		if blocks > 1 {
			cut := (blocks + 1) / 2 * size
			var hi float64 = math.Inf(-1)
			for _, r := range order[:cut] {
				hi = max(hi, x.At(r, 1))
			}
			for _, r := range order[cut:] {
				if x.At(r, 1) < hi {
					t.Errorf("size %d: the first split is not along coordinate 1", size)
				}
			}
		}
	}
	if _, err := BlockOrder(x, 0); err == nil {
		t.Error("block size 0 accepted")
	}
	if _, err := BlockOrder(nil, 3); err == nil {
		t.Error("nil x accepted")
	}
}

// TestBlockDiagOptions checks the rejected BlockSize values and bound
// combinations, ParseBound and the accessors.
func TestBlockDiagOptions(t *testing.T) {
	k := newKernel(t, 1, 1)
	z := mat.NewDense(2, 2, []float64{0, 0, 1, 1})
	for _, c := range []struct {
		name string
		opts Options
	}{{"size 0", Options{Bound: BlockDiagonal}}, {"negative size", Options{Bound: BlockDiagonal, BlockSize: -3}},
		{"size with standard", Options{BlockSize: 4}}, {"size with tighter", Options{Bound: Tighter, BlockSize: 4}},
		{"tight", Options{Bound: BlockDiagonal, BlockSize: 4, Tight: true}}} {
		if _, err := New(k, newNoise(t, 0.1), z, nil, c.opts); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	md, err := New(k, newNoise(t, 0.1), z, nil, Options{Bound: BlockDiagonal, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if md.BoundKind() != BlockDiagonal || md.BlockSize() != 16 {
		t.Errorf("BoundKind %v, BlockSize %d", md.BoundKind(), md.BlockSize())
	}
	if b, err := ParseBound("blockdiag"); err != nil || b != BlockDiagonal || b.String() != "blockdiag" {
		t.Errorf("ParseBound(\"blockdiag\") = %v, %v", b, err)
	}
}

// TestBlockDiagPosterior: the BlockDiagonal bound leaves the optimal q(u)
// and q*(v⊥), and so the predictions, those of the Standard bound.
func TestBlockDiagPosterior(t *testing.T) {
	x, y := toyData(30, 65)
	rng := rand.New(rand.NewPCG(65, 65))
	z := randMat(rng, 4, 2, 1)
	o := randMat(rng, 3, 2, 1)
	xs := randMat(rng, 7, 2, 1)
	k := newKernel(t, 0.9, 1.2)
	for _, oo := range []*mat.Dense{nil, o} {
		var means, vars [2][]float64
		for i, opts := range []Options{{}, {Bound: BlockDiagonal, BlockSize: 5}} {
			md, err := New(k, newNoise(t, 0.05), z, oo, opts)
			if err != nil {
				t.Fatal(err)
			}
			p, err := md.Posterior(x, y)
			if err != nil {
				t.Fatal(err)
			}
			means[i], vars[i] = make([]float64, 7), make([]float64, 7)
			if err := p.Predict(xs, means[i], vars[i]); err != nil {
				t.Fatal(err)
			}
		}
		for i := range means[0] {
			if means[0][i] != means[1][i] || vars[0][i] != vars[1][i] {
				t.Errorf("O %v: point %d: Standard (%v, %v), blockdiag (%v, %v)", oo != nil, i, means[0][i], vars[0][i], means[1][i], vars[1][i])
			}
		}
	}
}

// TestBlockDiagThreads: working on the blocks in parallel (Threads 4)
// gives the bound and gradient of one thread, to rounding, in one chunk
// (kept factors) and in several (factors formed anew).
func TestBlockDiagThreads(t *testing.T) {
	x, y := toyData(40, 66)
	rng := rand.New(rand.NewPCG(66, 66))
	z := randMat(rng, 5, 2, 1)
	o := randMat(rng, 3, 2, 1)
	for _, chunk := range []int{0, 12} {
		var f [2]float64
		var g [2][]float64
		for i, threads := range []int{1, 4} {
			md, err := New(newKernel(t, 0.8, 1.1), newNoise(t, 0.04), z, o,
				Options{Bound: BlockDiagonal, BlockSize: 3, ChunkSize: chunk, Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			g[i] = make([]float64, md.NumParams())
			if f[i], err = md.BoundGrad(x, y, g[i]); err != nil {
				t.Fatal(err)
			}
		}
		if math.Abs(f[0]-f[1]) > 1e-12*math.Abs(f[0]) {
			t.Errorf("chunk %d: bound %v with one thread, %v with four", chunk, f[0], f[1])
		}
		for i := range g[0] {
			if math.Abs(g[0][i]-g[1][i]) > 1e-10*math.Max(1, math.Abs(g[0][i])) {
				t.Errorf("chunk %d: gradient %d: %v with one thread, %v with four", chunk, i, g[0][i], g[1][i])
			}
		}
	}
}
