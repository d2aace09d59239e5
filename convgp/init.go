package convgp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	gpinducing "github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/patches"
)

// InitOptions control InitInducing.
type InitOptions struct {
	// Images is the number of images drawn at random (without replacement)
	// whose patches feed k-means; 0 means 1000, as in the paper.
	Images int
	// PerCentre is the number of patches per k-means centre; 0 means 100
	// (k-means runs on (M + M₂)·PerCentre patches, as in the paper, or on
	// all the patches of the images drawn if they are fewer).
	PerCentre int
	// Seed seeds the image and patch draws, k-means and the locations.
	Seed uint64
	// Threads bounds the goroutines of k-means (0: GOMAXPROCS).
	Threads int
}

// InitInducing returns inducing points Z (m × InducingDim) and, if m2 > 0,
// orthogonal inducing points O (m2 × InducingDim) for kernel k, initialized
// as in the SOLVE-GP paper: k-means centres of (m + m2)·100 patches drawn at
// random from the patches of 1000 random images of x (n × Dim); the first m
// centres become Z and the rest O. For a TICK kernel each point also gets a
// location drawn uniformly from [0, OutHeight] × [0, OutWidth].
//
// The patches are drawn in memory proportional to their number, not to
// the number of candidates (images × patches per image) beyond about four
// million of them.
//
// Bad sizes (m < 1, m2 < 0, images that are not n × Dim, inducing points
// of more than MaxModelParams values in all) and images that k-means
// refuses (NaN, Inf or huge values) are errors wrapping ErrConfig.
func InitInducing(x *mat.Dense, k *Kernel, m, m2 int, opts InitOptions) (z, o *mat.Dense, err error) {
	if x == nil || k == nil {
		return nil, nil, fmt.Errorf("%w: nil images or kernel", ErrConfig)
	}
	return initFromGeom(x, k.geom, k.tick, m, m2, opts)
}

// initFromGeom is InitInducing for the patches of geometry g, with
// locations appended if tick.
func initFromGeom(x *mat.Dense, g *patches.Geometry, tick bool, m, m2 int, opts InitOptions) (z, o *mat.Dense, err error) {
	n, c := x.Dims()
	if c != g.ImageLen() || n < 1 {
		return nil, nil, fmt.Errorf("%w: images are %d×%d, want n×%d", ErrConfig, n, c, g.ImageLen())
	}
	if m < 1 || m2 < 0 {
		return nil, nil, fmt.Errorf("%w: M = %d, M2 = %d: want M ≥ 1 and M2 ≥ 0", ErrConfig, m, m2)
	}
	ID := g.PatchLen()
	if tick {
		ID += 2
	}
	// The inducing points are parameters: more values than a model may
	// have are refused before anything is allocated (this also keeps
	// m + m2 from overflowing).
	if m > MaxModelParams || m2 > MaxModelParams || m+m2 > MaxModelParams/ID {
		return nil, nil, fmt.Errorf("%w: M + M2 = %d + %d inducing points of %d values each: more than %d parameters", ErrConfig, m, m2, ID, MaxModelParams)
	}
	if opts.Images <= 0 {
		opts.Images = 1000
	}
	if opts.PerCentre <= 0 {
		opts.PerCentre = 100
	}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5851f42d4c957f2d))
	ni := min(opts.Images, n)
	imgs := rng.Perm(n)[:ni]
	P, d, L := g.NumPatches(), g.PatchLen(), g.ImageLen()
	if P > math.MaxInt/ni {
		return nil, nil, fmt.Errorf("%w: %d images of %d patches: too many patches", ErrConfig, ni, P)
	}
	total := ni * P
	// (m + m2)·PerCentre patches, or all of them if there are fewer (the
	// product is not formed then: it may overflow).
	want := total
	if k := m + m2; opts.PerCentre <= total/k {
		want = k * opts.PerCentre
	}
	// Draw `want` distinct (image, patch) pairs.
	pick := samplePatches(rng, total, want, permLimit)
	pts := mat.NewDense(want, d, nil)
	buf := make([]float64, P*d)
	// Group the picks by image so each image is cut once.
	byImage := make(map[int][]int, ni)
	for i, v := range pick {
		byImage[v/P] = append(byImage[v/P], i)
	}
	raw := x.RawMatrix()
	img := make([]float64, L)
	for ii := 0; ii < ni; ii++ {
		rows := byImage[ii]
		if len(rows) == 0 {
			continue
		}
		copy(img, raw.Data[imgs[ii]*raw.Stride:imgs[ii]*raw.Stride+L])
		if err := g.Im2Col(buf, img, 1); err != nil {
			return nil, nil, err
		}
		for _, i := range rows {
			p := pick[i] % P
			copy(pts.RawRowView(i), buf[p*d:p*d+d])
		}
	}
	centres, err := gpinducing.KMeans(pts, m+m2, gpinducing.KMeansOptions{Subsample: want, Seed: opts.Seed, Threads: opts.Threads})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	fill := func(rows, off int) *mat.Dense {
		out := mat.NewDense(rows, ID, nil)
		for i := 0; i < rows; i++ {
			copy(out.RawRowView(i)[:d], centres.RawRowView(off+i))
			if tick {
				out.Set(i, d, rng.Float64()*float64(g.OutHeight()))
				out.Set(i, d+1, rng.Float64()*float64(g.OutWidth()))
			}
		}
		return out
	}
	z = fill(m, 0)
	if m2 > 0 {
		o = fill(m2, m)
	}
	return z, o, nil
}

// permLimit is the number of candidate patches up to which samplePatches
// draws them from a full permutation, as InitInducing always did: the
// default 1000 images of MNIST or CIFAR-10 have 0.7–0.9 million patches.
const permLimit = 1 << 22

// samplePatches returns want distinct integers of [0, total) in random
// order. Up to limit candidates it takes the first want of rng.Perm(total),
// which keeps the draws (and so the inducing points) of every seed as they
// were; beyond, where the permutation would take 8 bytes per candidate
// (gigabytes for all the patches of a large data set), it draws them by
// Floyd's algorithm and shuffles them, in memory proportional to want.
func samplePatches(rng *rand.Rand, total, want, limit int) []int {
	if total <= limit {
		return rng.Perm(total)[:want]
	}
	pick := make([]int, 0, want)
	seen := make(map[int]struct{}, want)
	for j := total - want; j < total; j++ {
		t := rng.IntN(j + 1)
		if _, dup := seen[t]; dup {
			t = j
		}
		seen[t] = struct{}{}
		pick = append(pick, t)
	}
	rng.Shuffle(len(pick), func(a, b int) { pick[a], pick[b] = pick[b], pick[a] })
	return pick
}
