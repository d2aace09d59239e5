package convgp

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestInitInducing(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			k := newTestKernel(t, tc.cfg, rng)
			x := testImages(rng, 30, k)
			z, o, err := InitInducing(x, k, 6, 4, InitOptions{Images: 20, PerCentre: 10, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if r, c := z.Dims(); r != 6 || c != k.InducingDim() {
				t.Fatalf("Z is %d×%d", r, c)
			}
			if r, c := o.Dims(); r != 4 || c != k.InducingDim() {
				t.Fatalf("O is %d×%d", r, c)
			}
			d := k.geom.PatchLen()
			all := mat.NewDense(10, k.InducingDim(), nil)
			all.Stack(z, o)
			for i := 0; i < 10; i++ {
				row := all.RawRowView(i)
				for _, v := range row[:d] {
					// Centres of patches of images in [0, 1] lie in [0, 1]
					// (up to the de-duplication jitter).
					if v < -0.01 || v > 1.01 {
						t.Fatalf("centre %d holds %v", i, v)
					}
				}
				if k.TICK() {
					if row[d] < 0 || row[d] > float64(k.geom.OutHeight()) || row[d+1] < 0 || row[d+1] > float64(k.geom.OutWidth()) {
						t.Fatalf("location (%v, %v) outside the grid", row[d], row[d+1])
					}
				}
				for j := 0; j < i; j++ {
					if mat.Equal(all.RowView(i), all.RowView(j)) {
						t.Fatalf("inducing points %d and %d are equal", i, j)
					}
				}
			}
			// Same seed, same result.
			z2, _, err := InitInducing(x, k, 6, 4, InitOptions{Images: 20, PerCentre: 10, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(z, z2) {
				t.Error("InitInducing is not reproducible")
			}
			if _, o, err := InitInducing(x, k, 3, 0, InitOptions{Seed: 1}); err != nil || o != nil {
				t.Errorf("M2 = 0: O = %v, err = %v", o, err)
			}
		})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	k := newTestKernel(t, testCases()[0].cfg, rng)
	if _, _, err := InitInducing(mat.NewDense(3, 5, nil), k, 2, 0, InitOptions{}); err == nil {
		t.Error("wrong image size accepted")
	}
	if _, _, err := InitInducing(testImages(rng, 3, k), k, 0, 0, InitOptions{}); err == nil {
		t.Error("M = 0 accepted")
	}
	if _, _, err := InitInducing(nil, k, 2, 0, InitOptions{}); err == nil {
		t.Error("nil images accepted")
	}
}

// TestInitInducingSizes checks that huge counts are errors wrapping
// ErrConfig or capped at the patches there are, where (m + m2)·PerCentre
// overflowed and InitInducing panicked.
func TestInitInducingSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	k := newTestKernel(t, testCases()[0].cfg, rng)
	x := testImages(rng, 5, k)
	for _, c := range []struct{ m, m2 int }{
		{math.MaxInt, 1}, {1, math.MaxInt}, {1 << 61, 0}, {MaxModelParams/k.InducingDim() + 1, 0}, {MaxModelParams / k.InducingDim(), 1},
	} {
		if _, _, err := InitInducing(x, k, c.m, c.m2, InitOptions{}); !errors.Is(err, ErrConfig) {
			t.Errorf("M = %d, M2 = %d: %v, want ErrConfig", c.m, c.m2, err)
		}
	}
	// More patches per centre than there are: k-means runs on all of them.
	all, _, err := InitInducing(x, k, 3, 1, InitOptions{PerCentre: x.RawMatrix().Rows * k.Geometry().NumPatches(), Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range []int{1 << 62, math.MaxInt / 2, math.MaxInt} {
		z, o, err := InitInducing(x, k, 3, 1, InitOptions{PerCentre: pc, Seed: 9})
		if err != nil {
			t.Fatalf("PerCentre = %d: %v", pc, err)
		}
		if !mat.Equal(z, all) || o == nil {
			t.Errorf("PerCentre = %d: not the centres of all the patches", pc)
		}
	}
	// Images k-means refuses.
	x.Set(1, 2, math.NaN())
	if _, _, err := InitInducing(x, k, 2, 0, InitOptions{}); !errors.Is(err, ErrConfig) {
		t.Errorf("NaN image: %v, want ErrConfig", err)
	}
}

// TestSamplePatches: below the limit the draws are those of rng.Perm, as
// they always were; beyond it Floyd's algorithm gives want distinct
// candidates, each about equally often over many draws.
func TestSamplePatches(t *testing.T) {
	const total, want = 50, 10
	for _, limit := range []int{total, total - 1} {
		rng := rand.New(rand.NewPCG(7, 8))
		ref := rand.New(rand.NewPCG(7, 8))
		count := make([]int, total)
		const draws = 20000
		for range draws {
			pick := samplePatches(rng, total, want, limit)
			if limit >= total {
				if perm := ref.Perm(total)[:want]; !slices.Equal(pick, perm) {
					t.Fatalf("below the limit: %v, rng.Perm gives %v", pick, perm)
				}
			}
			if len(pick) != want {
				t.Fatalf("limit %d: %d picks", limit, len(pick))
			}
			seen := map[int]bool{}
			for _, v := range pick {
				if v < 0 || v >= total || seen[v] {
					t.Fatalf("limit %d: picks %v", limit, pick)
				}
				seen[v] = true
				count[v]++
			}
		}
		// Each candidate is picked with probability want/total: 4000
		// times in expectation, standard deviation about 57.
		for v, c := range count {
			if math.Abs(float64(c)-draws*want/total) > 300 {
				t.Errorf("limit %d: candidate %d picked %d times, want about %d", limit, v, c, draws*want/total)
			}
		}
	}
	// Large totals take memory in proportion to want.
	rng := rand.New(rand.NewPCG(1, 2))
	if pick := samplePatches(rng, 1<<40, 3, permLimit); len(pick) != 3 || pick[0] == pick[1] || pick[1] == pick[2] || pick[0] == pick[2] {
		t.Errorf("picks %v", pick)
	}
}
