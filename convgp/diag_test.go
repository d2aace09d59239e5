package convgp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/floats"
)

// diagGradOf returns DiagGrad's parameter and pixel gradients for the
// adjoint dd.
func diagGradOf(k *Kernel, dd []float64, x *mat.Dense, withX bool) ([]float64, *mat.Dense) {
	dp := make([]float64, k.NumParams())
	var dx *mat.Dense
	if withX {
		r, c := x.Dims()
		dx = mat.NewDense(r, c, nil)
	}
	k.DiagGrad(dd, x, dx, dp)
	return dp, dx
}

// sameParams gives dst exactly the parameters of src (SetParams(Params())
// may round the weights).
func sameParams(dst, src *Kernel) {
	copy(dst.w, src.w)
	dst.setScalars(src.uVar, src.uLen, src.uLoc)
}

func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if !floats.EqualBits(got, want) {
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s[%d] = %v, want %v (bitwise)", what, i, got[i], want[i])
			}
		}
		t.Fatalf("%s: lengths %d, %d", what, len(got), len(want))
	}
}

// TestDiagCache checks that DiagGrad gives bitwise the same gradients
// whether or not it can reuse the pieces of a preceding Diag, and that the
// cache notices images changed in place, new parameters, a different batch
// and a first request for pixel gradients.
func TestDiagCache(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, 22))
			cached := newTestKernel(t, tc.cfg, rand.New(rand.NewPCG(1, 2)))
			fresh := func() *Kernel { return newTestKernel(t, tc.cfg, rand.New(rand.NewPCG(1, 2))) }
			x := testImages(rng, 5, cached)
			dd := []float64{0.3, -1.2, 2, 0.7, -0.1}
			v := make([]float64, 5)
			// check runs Diag, then mutate, then DiagGrad, and compares
			// with a fresh kernel with the same parameters.
			check := func(step string, withX bool, mutate func()) {
				t.Helper()
				ref := fresh()
				sameParams(ref, cached)
				wantV := make([]float64, 5)
				ref.Diag(wantV, x)
				cached.Diag(v, x)
				sameBits(t, step+": Diag", v, wantV)
				if mutate != nil {
					mutate()
					ref = fresh()
					sameParams(ref, cached)
				}
				wantP, wantX := diagGradOf(ref, dd, x, withX)
				gotP, gotX := diagGradOf(cached, dd, x, withX)
				sameBits(t, step+": dparams", gotP, wantP)
				if withX {
					sameBits(t, step+": dx", gotX.RawMatrix().Data, wantX.RawMatrix().Data)
				}
			}
			// The first DiagGrad turns the pieces on.
			check("first", false, nil)
			if !cached.dstate.wantPieces {
				t.Fatal("pieces not requested after a DiagGrad")
			}
			check("cached", false, nil)
			check("needs dx", true, nil)
			check("cached with dx", true, nil)
			check("image changed", true, func() { x.Set(2, 3, x.At(2, 3)+0.25) })
			p := make([]float64, cached.NumParams())
			check("params changed", true, func() {
				cached.Params(p)
				p[1] += 0.1
				p[len(p)-1] -= 0.2
				if err := cached.SetParams(p); err != nil {
					t.Fatal(err)
				}
			})
			// A smaller batch (a prefix of the cached one).
			cached.Diag(v, x)
			x4 := x.Slice(0, 4, 0, cached.Dim()).(*mat.Dense)
			ref := fresh()
			sameParams(ref, cached)
			wantP, _ := diagGradOf(ref, dd[:4], mat.DenseCopyOf(x4), false)
			gotP, _ := diagGradOf(cached, dd[:4], mat.DenseCopyOf(x4), false)
			sameBits(t, "prefix batch", gotP, wantP)
			// Forward-only use (prediction) turns the pieces off again.
			cached.Diag(v, x)
			cached.Diag(v, x)
			if cached.dstate.wantPieces {
				t.Error("pieces still computed after an unused Diag")
			}
		})
	}
}

// TestDiagConcurrent calls Diag, DiagGrad, Matrix and MatrixGrad from
// several goroutines on different images (for the race detector and the cache's ownership rule)
// and compares with serial results.
func TestDiagConcurrent(t *testing.T) {
	tc := testCases()[3]
	k := newTestKernel(t, tc.cfg, rand.New(rand.NewPCG(1, 2)))
	rng := rand.New(rand.NewPCG(5, 6))
	const G = 4
	xs := make([]*mat.Dense, G)
	want := make([][]float64, G)
	dd := []float64{1, -0.5, 0.25}
	zs := make([]*mat.Dense, G)
	wantM, wantZ := make([][]float64, G), make([][]float64, G)
	dK := randDense(rng, 4, 3)
	for g := range xs {
		xs[g] = testImages(rng, 3, k)
		zs[g] = inducing(k, rng, 4)
		ref := newTestKernel(t, tc.cfg, rand.New(rand.NewPCG(1, 2)))
		want[g], _ = diagGradOf(ref, dd, xs[g], false)
		var dz *mat.Dense
		wantM[g], dz, _ = matGradOf(ref, dK, zs[g], xs[g])
		wantZ[g] = dz.RawMatrix().Data
	}
	var wg sync.WaitGroup
	errs := make([]string, G)
	for g := 0; g < G; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := make([]float64, 3)
			K := mat.NewDense(4, 3, nil)
			for it := 0; it < 20; it++ {
				k.Diag(v, xs[g])
				got, _ := diagGradOf(k, dd, xs[g], false)
				if !floats.EqualBits(got, want[g]) {
					errs[g] = "Diag gradient differs from the serial one"
					return
				}
				k.Matrix(K, zs[g], xs[g])
				gp, gz, _ := matGradOf(k, dK, zs[g], xs[g])
				if !floats.EqualBits(gp, wantM[g]) || !floats.EqualBits(gz.RawMatrix().Data, wantZ[g]) {
					errs[g] = "Matrix gradient differs from the serial one"
					return
				}
			}
		}()
	}
	wg.Wait()
	for g, e := range errs {
		if e != "" {
			t.Errorf("goroutine %d: %s", g, e)
		}
	}
}

// TestWeightParams checks the scaled weight parameterization: the default
// weights 1/P are parameters 1, and SetParams divides by P.
func TestWeightParams(t *testing.T) {
	cfg := testCases()[3].cfg
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]float64, k.NumParams())
	k.Params(p)
	P := k.geom.NumPatches()
	for _, v := range p[k.wOff():] {
		if v != 1 {
			t.Fatalf("default weight parameters %v, want ones", p[k.wOff():])
		}
	}
	p[k.wOff()+1] = 3
	if err := k.SetParams(p); err != nil {
		t.Fatal(err)
	}
	if w := k.Weights(); w[1] != 3/float64(P) || w[0] != 1/float64(P) {
		t.Errorf("weights %v after parameters %v", w[:2], p[k.wOff():k.wOff()+2])
	}
}

// matGradOf returns MatrixGrad's gradients for the adjoint dK.
func matGradOf(k *Kernel, dK, z, x *mat.Dense) (dp []float64, dz, dx *mat.Dense) {
	dp = make([]float64, k.NumParams())
	dz = mat.NewDense(z.RawMatrix().Rows, z.RawMatrix().Cols, nil)
	dx = mat.NewDense(x.RawMatrix().Rows, x.RawMatrix().Cols, nil)
	k.MatrixGrad(dK, nil, z, x, dz, dx, dp)
	return dp, dz, dx
}

// TestMatrixCache checks that MatrixGrad gives bitwise the same gradients
// whether or not it reuses the exponentials of a preceding Matrix, for two
// sets of inducing points (as SOLVE-GP uses them), and that the cache
// notices changed inducing points, images and parameters.
func TestMatrixCache(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(23, 24))
			ccfg := tc.cfg
			ccfg.CacheBytes = 512 << 20 // the cache is off by default
			cached := newTestKernel(t, ccfg, rand.New(rand.NewPCG(1, 2)))
			fresh := func() *Kernel {
				k := newTestKernel(t, tc.cfg, rand.New(rand.NewPCG(1, 2)))
				sameParams(k, cached)
				return k
			}
			x := testImages(rng, 4, cached)
			z, o := inducing(cached, rng, 3), inducing(cached, rng, 5)
			dKz, dKo := randDense(rng, 3, 4), randDense(rng, 5, 4)
			Kz, Ko := mat.NewDense(3, 4, nil), mat.NewDense(5, 4, nil)
			compare := func(step string, dK, zz *mat.Dense) {
				t.Helper()
				wp, wz, wx := matGradOf(fresh(), dK, zz, x)
				gp, gz, gx := matGradOf(cached, dK, zz, x)
				sameBits(t, step+": dparams", gp, wp)
				sameBits(t, step+": dz", gz.RawMatrix().Data, wz.RawMatrix().Data)
				sameBits(t, step+": dx", gx.RawMatrix().Data, wx.RawMatrix().Data)
			}
			forward := func() {
				ref := fresh()
				for _, c := range []struct{ zz, K *mat.Dense }{{z, Kz}, {o, Ko}} {
					r, cc := c.K.Dims()
					want := mat.NewDense(r, cc, nil)
					ref.Matrix(want, c.zz, x)
					cached.Matrix(c.K, c.zz, x)
					sameBits(t, "Matrix", c.K.RawMatrix().Data, want.RawMatrix().Data)
				}
			}
			forward()
			compare("first o", dKo, o)
			compare("first z", dKz, z)
			if !cached.mstate.want {
				t.Fatal("MatrixGrad did not ask Matrix to keep its exponentials")
			}
			for it := 0; it < 2; it++ {
				forward()
				if len(cached.mstate.entries) != 2 {
					t.Fatalf("%d cache entries after two Matrix calls", len(cached.mstate.entries))
				}
				compare("cached o", dKo, o)
				compare("cached z", dKz, z)
				// Both gradients used (and spent) the kept entries.
				for i, e := range cached.mstate.entries {
					if !e.spent {
						t.Fatalf("entry %d not used by MatrixGrad", i)
					}
				}
			}
			forward()
			z.Set(1, 0, z.At(1, 0)+0.3)
			compare("z changed", dKz, z)
			forward()
			x.Set(3, 2, x.At(3, 2)-0.2)
			compare("x changed", dKo, o)
			forward()
			p := make([]float64, cached.NumParams())
			cached.Params(p)
			p[1] -= 0.15
			if err := cached.SetParams(p); err != nil {
				t.Fatal(err)
			}
			compare("params changed", dKz, z)
			// Forward-only use stops the caching.
			for i := 0; i < 3; i++ {
				forward()
			}
			if cached.mstate.want {
				t.Error("still caching after unused Matrix results")
			}
		})
	}
}

// TestMatrixCacheLimit checks Config.CacheBytes: a batch whose
// exponentials exceed it is not kept (MatrixGrad recomputes them, with the
// same bits), one that fits is, and zero (the default) or a negative value
// keeps none.
func TestMatrixCacheLimit(t *testing.T) {
	tc := testCases()[0]
	for _, c := range []struct {
		name  string
		bytes func(P int) int
		kept  int // entries kept after Matrix with z (3 rows) and o (5 rows)
	}{
		{"z-fits", func(P int) int { return 8 * 3 * 4 * P }, 1},
		{"z-short", func(P int) int { return 8*3*4*P - 1 }, 0},
		{"both", func(P int) int { return 8 * 5 * 4 * P }, 2},
		{"off", func(int) int { return -1 }, 0},
		{"default", func(int) int { return 0 }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(25, 26))
			ref := newTestKernel(t, tc.cfg, rand.New(rand.NewPCG(1, 2)))
			cfg := tc.cfg
			cfg.CacheBytes = c.bytes(ref.geom.NumPatches())
			k := newTestKernel(t, cfg, rand.New(rand.NewPCG(1, 2)))
			sameParams(k, ref)
			x := testImages(rng, 4, k)
			z, o := inducing(k, rng, 3), inducing(k, rng, 5)
			dKz, dKo := randDense(rng, 3, 4), randDense(rng, 5, 4)
			for it := 0; it < 3; it++ {
				for _, zz := range []*mat.Dense{z, o} {
					r, _ := zz.Dims()
					got, want := mat.NewDense(r, 4, nil), mat.NewDense(r, 4, nil)
					k.Matrix(got, zz, x)
					ref.Matrix(want, zz, x)
					sameBits(t, "Matrix", got.RawMatrix().Data, want.RawMatrix().Data)
				}
				live := 0
				for _, e := range k.mstate.entries {
					if !e.spent {
						live++
					}
				}
				if it > 0 && live != c.kept {
					t.Fatalf("step %d: %d entries kept, want %d", it, live, c.kept)
				}
				for _, g := range []struct{ dK, zz *mat.Dense }{{dKo, o}, {dKz, z}} {
					gp, gz, gx := matGradOf(k, g.dK, g.zz, x)
					wp, wz, wx := matGradOf(ref, g.dK, g.zz, x)
					sameBits(t, "dparams", gp, wp)
					sameBits(t, "dz", gz.RawMatrix().Data, wz.RawMatrix().Data)
					sameBits(t, "dx", gx.RawMatrix().Data, wx.RawMatrix().Data)
				}
			}
		})
	}
}

// TestImageSumsBruteForce checks every sum of imageSums (the variance, its
// lengthscale and location pieces, the weight sums and the pixel rows)
// against a double loop over all patch pairs, on the 72-patch cases (which
// cross the block edges) with lengthscales so short that most exponential
// arguments fall below the kernels' range, as well as a moderate one. It
// also checks Matrix against brute force with one inducing patch far from
// every image patch.
func TestImageSumsBruteForce(t *testing.T) {
	for _, tc := range testCases() {
		if tc.cfg.Patches.Height != 11 {
			continue
		}
		for _, ell := range []float64{1.3, 0.03, 0.015} {
			t.Run(fmt.Sprintf("%s/ell=%v", tc.name, ell), func(t *testing.T) {
				cfg := tc.cfg
				cfg.Lengthscale = ell
				rng := rand.New(rand.NewPCG(31, 32))
				k := newTestKernel(t, cfg, rng)
				x := testImages(rng, 2, k)
				P, d := k.geom.NumPatches(), k.geom.PatchLen()
				s := new(scratch)
				for n := 0; n < 2; n++ {
					k.patchesOf(s, x.RawMatrix().Data, n)
					sv, sl, so := k.imageSums(s, true, true)
					var wsv, wsl, wso, mag float64
					for p := 0; p < P; p++ {
						var gs float64
						dx := make([]float64, d)
						for q := 0; q < P; q++ {
							var d2 float64
							for j := 0; j < d; j++ {
								v := s.xp[p*d+j] - s.xp[q*d+j]
								d2 += v * v
							}
							e := math.Exp(-d2 / (2 * ell * ell))
							tq, dtq := 1.0, 0.0
							if k.tick {
								tq, dtq = k.klocPP[p*P+q], k.dlocPP[p*P+q]
							}
							a := k.w[p] * k.w[q] * tq * e
							wsv += a
							wsl += a * d2
							wso += k.w[p] * k.w[q] * dtq * e
							mag += math.Abs(a)
							gs += k.w[q] * tq * e
							for j := range dx {
								dx[j] += k.w[q] * tq * e * (s.xp[q*d+j] - s.xp[p*d+j])
							}
						}
						if math.Abs(s.gs[p]-gs) > 1e-11*math.Max(1, math.Abs(gs)) {
							t.Fatalf("image %d: gs[%d] = %v, want %v", n, p, s.gs[p], gs)
						}
						for j, want := range dx {
							if got := s.dxp[p*d+j]; math.Abs(got-want) > 1e-11 {
								t.Fatalf("image %d: dxp[%d,%d] = %v, want %v", n, p, j, got, want)
							}
						}
					}
					for _, c := range []struct {
						what      string
						got, want float64
					}{{"sv", sv, wsv}, {"sl", sl, wsl}, {"so", so, wso}} {
						if c.what == "so" && !k.tick {
							continue
						}
						if math.Abs(c.got-c.want) > 1e-11*math.Max(1, mag) {
							t.Errorf("image %d: %s = %v, want %v", n, c.what, c.got, c.want)
						}
					}
				}
				// Matrix, with inducing patch 0 far from every patch.
				M := 3
				z := inducing(k, rng, M)
				for j := 0; j < d; j++ {
					z.Set(0, j, 40)
				}
				K := mat.NewDense(M, 2, nil)
				k.Matrix(K, z, x)
				for n := 0; n < 2; n++ {
					checkKuf(t, k, K, z, n, brutePatches(k, x.RawRowView(n)))
				}
			})
		}
	}
}

// TestStepAllocs checks that a training step's kernel calls reuse their
// large buffers: after a first step, Matrix, MatrixGrad, InducingMatrix and
// InducingMatrixGrad on the same shapes (TICK, M = 200, 72 patches, eight
// images, two workers) allocate less than one M×P table per step, where
// allocating them afresh took more than five (location tables, workers'
// sums, inducing copies, the M×M adjoint block); on a VM each fresh page
// costs a page fault. The bound is on the median step, as a one-off
// growth of the buffers is not a step's steady cost.
func TestStepAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var tc testCase
	for _, c := range testCases() {
		if c.name == "tick-blocks" {
			tc = c
		}
	}
	tc.cfg.Workers = 2
	rng := rand.New(rand.NewPCG(31, 32))
	k := newTestKernel(t, tc.cfg, rng)
	const M, N = 200, 8
	x := testImages(rng, N, k)
	z := inducing(k, rng, M)
	K, dK := mat.NewDense(M, N, nil), randDense(rng, M, N)
	kuu, dKuu := mat.NewDense(M, M, nil), randDense(rng, M, M)
	dz := mat.NewDense(M, k.InducingDim(), nil)
	dp := make([]float64, k.NumParams())
	step := func() {
		k.Matrix(K, z, x)
		k.InducingMatrix(kuu, z, z)
		k.MatrixGrad(dK, nil, z, x, dz, nil, dp)
		k.InducingMatrixGrad(dKuu, nil, z, z, dz, nil, dp)
	}
	// Two warm-up steps; then the median of nine, since a step on a loaded
	// machine may first run both workers at once and grow a second set of
	// buffers once.
	step()
	step()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	const reps = 9
	per := make([]uint64, reps)
	for i := range per {
		runtime.ReadMemStats(&before)
		step()
		runtime.ReadMemStats(&after)
		per[i] = after.TotalAlloc - before.TotalAlloc
	}
	slices.Sort(per)
	bytes := per[reps/2]
	if table := uint64(M * k.geom.NumPatches() * 8); bytes > table {
		t.Errorf("a step allocates %d bytes, more than one M×P table (%d bytes)", bytes, table)
	}
}
