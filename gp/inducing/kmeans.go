package inducing

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
)

// KMeansOptions control KMeans. The zero value gives the defaults.
type KMeansOptions struct {
	// Subsample is the number of rows, drawn at random without
	// replacement, on which k-means runs (0 means min(n, 100·k), as the
	// paper does for its convolutional models; values above n mean n).
	Subsample int
	// MaxIter bounds the Lloyd iterations (0 means 30).
	MaxIter int
	// Tol stops the iterations once the mean squared distance to the
	// nearest centre improves by less than this relative amount (0 means
	// 1e-6). They also stop when no point changes cluster.
	Tol float64
	// Seed seeds the subsample and the k-means++ draws.
	Seed uint64
	// Threads bounds the goroutines of the distance GEMMs (0 means
	// GOMAXPROCS). Results are reproducible for a fixed Seed and Threads.
	Threads int
}

// MaxKMeansInput bounds the magnitude of the values KMeans accepts: squared
// distances between larger values overflow float64.
const MaxKMeansInput = 1e150

// maxKMeansValues bounds k·d, the size of the centre matrix (1 GiB), so
// that an absurd k is an error rather than a fatal out-of-memory.
const maxKMeansValues = 1 << 27

// KMeans returns k cluster centres (k×d) of the rows of x: k-means++
// seeding (Arthur & Vassilvitskii, 2007) on a random subsample followed
// by Lloyd iterations. Squared distances to all centres are computed as
// ‖x‖² + ‖c‖² − 2·x·cᵀ with one GEMM per block of rows; when the data's
// mean is far from the origin relative to their spread, for the data and
// centres shifted by the data's column means, so that they lose no
// accuracy (data centred or standardized as a whole are not shifted, but
// the random subsample k-means runs on may be, which changes its
// distances only in rounding).
//
// An empty cluster is moved to the point farthest from its centre. When k
// exceeds the number of distinct points, the surplus centres duplicate
// data points; KMeans then perturbs each duplicate by a small seeded
// jitter (1e-3 of the column's spread, or 1e-3 for a constant column, and
// at least a few units in the last place of the column's largest value) so
// that all returned centres are distinct, as inducing inputs must be.
//
// KMeans returns an error for an empty, nil or non-finite x, for values
// beyond MaxKMeansInput, and for k < 1 or a k·d beyond 2²⁷ values.
func KMeans(x *mat.Dense, k int, opts KMeansOptions) (*mat.Dense, error) {
	if x == nil {
		return nil, errors.New("inducing: KMeans: nil data")
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil, errors.New("inducing: KMeans: no data")
	}
	if k < 1 {
		return nil, fmt.Errorf("inducing: KMeans: k = %d, need at least 1", k)
	}
	if k > maxKMeansValues/d {
		return nil, fmt.Errorf("inducing: KMeans: k = %d centres of %d values each is more than %d values", k, d, maxKMeansValues)
	}
	if opts.Subsample < 0 || opts.MaxIter < 0 || !(opts.Tol >= 0) {
		return nil, fmt.Errorf("inducing: KMeans: bad options %+v", opts)
	}
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("inducing: KMeans: x[%d][%d] = %v is not finite", i, j, v)
			}
			if math.Abs(v) > MaxKMeansInput {
				return nil, fmt.Errorf("inducing: KMeans: |x[%d][%d]| = %g exceeds %g, where squared distances overflow; standardize the data", i, j, math.Abs(v), MaxKMeansInput)
			}
		}
	}
	maxIter := opts.MaxIter
	if maxIter == 0 {
		maxIter = 30
	}
	tol := opts.Tol
	if tol == 0 {
		tol = 1e-6
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6b6d65616e73))

	// Subsample.
	ns := opts.Subsample
	if ns == 0 {
		ns = 100 * k
	}
	ns = min(ns, n)
	var xs *mat.Dense
	if ns == n {
		xs = x
	} else {
		perm := rng.Perm(n)[:ns]
		xs = mat.NewDense(ns, d, nil)
		for i, r := range perm {
			copy(xs.RawRowView(i), x.RawRowView(r))
		}
	}

	c := seedPlusPlus(xs, k, rng)
	lloyd(xs, c, maxIter, tol, opts.Threads)
	dedupe(c, xs, rng)
	return c, nil
}

// Init runs KMeans with m + m2 centres and returns the first m as
// the inducing inputs Z and the next m2 as the orthogonal inducing inputs
// O (nil if m2 = 0), as the SOLVE-GP paper initializes them.
func Init(x *mat.Dense, m, m2 int, opts KMeansOptions) (z, o *mat.Dense, err error) {
	if m < 1 || m2 < 0 {
		return nil, nil, fmt.Errorf("inducing: Init: m = %d, m2 = %d; need m ≥ 1 and m2 ≥ 0", m, m2)
	}
	c, err := KMeans(x, m+m2, opts)
	if err != nil {
		return nil, nil, err
	}
	_, d := c.Dims()
	z = mat.DenseCopyOf(c.Slice(0, m, 0, d))
	if m2 > 0 {
		o = mat.DenseCopyOf(c.Slice(m, m+m2, 0, d))
	}
	return z, o, nil
}

// seedPlusPlus picks k centres from the rows of x by k-means++ sampling.
func seedPlusPlus(x *mat.Dense, k int, rng *rand.Rand) *mat.Dense {
	n, d := x.Dims()
	c := mat.NewDense(k, d, nil)
	dist := make([]float64, n) // squared distance to the nearest chosen centre
	first := rng.IntN(n)
	copy(c.RawRowView(0), x.RawRowView(first))
	for i := range dist {
		dist[i] = sqDist(x.RawRowView(i), c.RawRowView(0))
	}
	for j := 1; j < k; j++ {
		var total float64
		for _, v := range dist {
			total += v
		}
		pick := -1
		if total > 0 {
			u := rng.Float64() * total
			var acc float64
			for i, v := range dist {
				acc += v
				if acc > u && v > 0 {
					pick = i
					break
				}
			}
			if pick < 0 { // rounding at the end of the cumulative sum
				for i := n - 1; i >= 0; i-- {
					if dist[i] > 0 {
						pick = i
						break
					}
				}
			}
		} else {
			pick = rng.IntN(n) // every point is already a centre
		}
		cj := c.RawRowView(j)
		copy(cj, x.RawRowView(pick))
		for i := range dist {
			if v := sqDist(x.RawRowView(i), cj); v < dist[i] {
				dist[i] = v
			}
		}
	}
	return c
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		t := v - b[i]
		s += t * t
	}
	return s
}

// assign sets label[i] to the nearest centre of row i of x and dist[i] to
// the squared distance, using ‖x‖² + ‖c‖² − 2·x·cᵀ in row blocks.
func assign(x, c *mat.Dense, label []int, dist []float64, threads int) {
	n, d := x.Dims()
	k, _ := c.Dims()
	impl := blas.Implementation{Threads: threads}
	cn := make([]float64, k)
	for j := range cn {
		r := c.RawRowView(j)
		cn[j] = dotSelf(r)
	}
	block := max(1, min(n, (1<<20)/k))
	g := make([]float64, block*k)
	xr, cr := x.RawMatrix(), c.RawMatrix()
	for lo := 0; lo < n; lo += block {
		b := min(block, n-lo)
		impl.Dgemm(gblas.NoTrans, gblas.Trans, b, k, d, -2, xr.Data[lo*xr.Stride:], xr.Stride, cr.Data, cr.Stride, 0, g, k)
		for i := 0; i < b; i++ {
			row := g[i*k : (i+1)*k]
			best, bj := math.Inf(1), 0
			for j, v := range row {
				if v += cn[j]; v < best {
					best, bj = v, j
				}
			}
			xi := dotSelf(x.RawRowView(lo + i))
			label[lo+i] = bj
			dist[lo+i] = math.Max(0, best+xi)
		}
	}
}

func dotSelf(a []float64) float64 {
	var s float64
	for _, v := range a {
		s += v * v
	}
	return s
}

// centredForDistances returns x shifted by its column means, and the
// means, when the shift matters for the accuracy of the distances: when
// the squared norm of the mean is more than 1/1000 of the mean squared
// norm of the rows. Otherwise (data centred or standardized already) it
// returns x itself and nil, so that such data are clustered exactly as
// without a shift.
func centredForDistances(x *mat.Dense) (*mat.Dense, []float64) {
	n, d := x.Dims()
	mean := make([]float64, d)
	var sq float64
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j, v := range row {
			mean[j] += v / float64(n)
		}
		sq += dotSelf(row) / float64(n)
	}
	if !(dotSelf(mean) > 1e-3*sq) {
		return x, nil
	}
	xc := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		row := xc.RawRowView(i)
		for j, v := range x.RawRowView(i) {
			row[j] = v - mean[j]
		}
	}
	return xc, mean
}

// lloyd runs Lloyd iterations on the centres c in place.
//
// The distances of assign, ‖x‖² + ‖c‖² − 2·x·cᵀ, carry rounding errors of
// about ε·‖x‖², which swamp the distances themselves for data far from the
// origin relative to their spread (an offset of 1e8 on a unit spread gives
// errors of order 1). For such data they are computed for the data and the
// centres shifted by the data's column means (see centredForDistances);
// the centres are updated from the data as given, so that the centre of a
// cluster of equal points is that point.
func lloyd(x, c *mat.Dense, maxIter int, tol float64, threads int) {
	n, d := x.Dims()
	k, _ := c.Dims()
	xc, shift := centredForDistances(x)
	cc := c
	if shift != nil {
		cc = mat.NewDense(k, d, nil)
	}
	label := make([]int, n)
	prev := make([]int, n)
	for i := range prev {
		prev[i] = -1
	}
	dist := make([]float64, n)
	count := make([]int, k)
	sum := mat.NewDense(k, d, nil)
	prevObj := math.Inf(1)
	for it := 0; it < maxIter; it++ {
		if shift != nil {
			for j := 0; j < k; j++ {
				row := cc.RawRowView(j)
				for t, v := range c.RawRowView(j) {
					row[t] = v - shift[t]
				}
			}
		}
		assign(xc, cc, label, dist, threads)
		var obj float64
		changed := false
		for i, l := range label {
			obj += dist[i]
			changed = changed || l != prev[i]
		}
		obj /= float64(n)
		if !changed || (it > 0 && prevObj-obj <= tol*prevObj) {
			return
		}
		prevObj = obj
		copy(prev, label)
		sum.Zero()
		clear(count)
		for i, l := range label {
			count[l]++
			s := sum.RawRowView(l)
			for j, v := range x.RawRowView(i) {
				s[j] += v
			}
		}
		for j := 0; j < k; j++ {
			cj := c.RawRowView(j)
			if count[j] == 0 {
				// Move an empty centre to the point farthest from its own.
				far, fi := -1.0, -1
				for i, v := range dist {
					if v > far {
						far, fi = v, i
					}
				}
				if far > 0 {
					copy(cj, x.RawRowView(fi))
					dist[fi] = 0
				}
				continue
			}
			s := sum.RawRowView(j)
			inv := 1 / float64(count[j])
			for t := range cj {
				cj[t] = s[t] * inv
			}
		}
	}
}

// dedupe perturbs centres that coincide exactly with an earlier centre.
func dedupe(c, x *mat.Dense, rng *rand.Rand) {
	k, d := c.Dims()
	n, _ := x.Dims()
	var scale []float64
	seen := make(map[string]struct{}, k)
	key := make([]byte, 8*d)
	rowKey := func(r []float64) string {
		for t, v := range r {
			binary.LittleEndian.PutUint64(key[8*t:], math.Float64bits(v+0)) // +0 folds −0 into 0
		}
		return string(key)
	}
	for j := 0; j < k; j++ {
		cj := c.RawRowView(j)
		for {
			kj := rowKey(cj)
			if _, dup := seen[kj]; !dup {
				seen[kj] = struct{}{}
				break
			}
			if scale == nil {
				scale = make([]float64, d)
				for t := 0; t < d; t++ {
					lo, hi := math.Inf(1), math.Inf(-1)
					for i := 0; i < n; i++ {
						v := x.At(i, t)
						lo, hi = math.Min(lo, v), math.Max(hi, v)
					}
					scale[t] = 1e-3 * (hi - lo)
					if !(scale[t] > 0) {
						scale[t] = 1e-3 * math.Max(1, math.Abs(lo))
					}
					// A jitter below the spacing of floats at the
					// column's magnitude would leave a duplicate as it is
					// forever (values near 1e16 are 2 apart).
					big := math.Max(math.Abs(lo), math.Abs(hi))
					scale[t] = math.Max(scale[t], 8*(math.Nextafter(big, math.Inf(1))-big))
				}
			}
			for t := range cj {
				cj[t] += scale[t] * rng.NormFloat64()
			}
		}
	}
}
