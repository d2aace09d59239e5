package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Softmax is the multi-class likelihood p(y = c | f) = exp(f_c) / Σ_k exp(f_k)
// over C latent functions. It has no parameters.
//
// Expectations are estimated by Monte Carlo with S reparameterised samples
// per point, f = μ + √v ⊙ ε, ε ~ N(0, I). Each call draws two 64-bit seeds
// from the rng passed to it; point n's S·C normals (in sample, class order,
// whatever the labels) come from a PCG generator seeded from those and n.
// Points are therefore independent of each other and of scheduling (they
// are evaluated in parallel), and re-seeding rng reproduces a call bit for
// bit (common random numbers). The gradients are exactly those of the
// estimate for the drawn ε: with p the softmax of a sample,
//
//	dμ_c = mean_s (δ_cy − p_c),  dv_c = mean_s (δ_cy − p_c) ε_c / (2√v_c).
//
// At v_c = 0, where √v is not differentiable, dv_c is the Price-theorem
// estimate −mean_s p_c (1 − p_c)/2 of the same expectation's derivative.
// A nil rng means fixed seeds, so that results are deterministic.
type Softmax struct {
	classes int
	samples int
	workerBound
}

// NewSoftmax returns a Softmax likelihood over 2 to MaxClasses classes.
// It accepts the Samples option (default DefaultSamples).
func NewSoftmax(classes int, opts ...Option) (*Softmax, error) {
	if classes < 2 || classes > MaxClasses {
		return nil, fmt.Errorf("likelihood: Softmax over %d classes, must be in [2, %d]", classes, MaxClasses)
	}
	c, err := newConfig("Softmax", optSamples, opts)
	if err != nil {
		return nil, err
	}
	return &Softmax{classes: classes, samples: c.samples}, nil
}

// Samples returns the number of Monte Carlo samples per point.
func (s *Softmax) Samples() int { return s.samples }

// Clone returns a *Softmax with the same settings that shares no state
// with s (see gp.Cloner).
func (s *Softmax) Clone() any {
	c := *s
	return &c
}

// NumLatent returns the number of classes C.
func (s *Softmax) NumLatent() int { return s.classes }

// NumParams returns 0.
func (s *Softmax) NumParams() int { return 0 }

// Params does nothing; dst must be empty.
func (s *Softmax) Params(dst []float64) {
	if len(dst) != 0 {
		panic("likelihood: Softmax has no parameters")
	}
}

// SetParams returns an error unless src is empty.
func (s *Softmax) SetParams(src []float64) error {
	if len(src) != 0 {
		return fmt.Errorf("likelihood: %d parameters, Softmax has none", len(src))
	}
	return nil
}

// Validate returns a *LabelError for the first label that is not an
// integer in [0, C).
func (s *Softmax) Validate(y []float64) error { return validateClasses(y, s.classes) }

// seeds draws the two per-call seeds from rng (fixed seeds for nil).
func seeds(rng *rand.Rand) (uint64, uint64) {
	if rng == nil {
		return 0x5eed, 0x50f7
	}
	return rng.Uint64(), rng.Uint64()
}

// smWork is per-goroutine scratch: a reseedable generator and buffers.
type smWork struct {
	src           *rand.PCG
	rng           *rand.Rand
	sd, eps, f, p []float64
	seed1, seed2  uint64
}

func newSMWork(c int, s1, s2 uint64) *smWork {
	src := rand.NewPCG(0, 0)
	buf := make([]float64, 4*c)
	return &smWork{src: src, rng: rand.New(src), sd: buf[:c], eps: buf[c : 2*c], f: buf[2*c : 3*c], p: buf[3*c:], seed1: s1, seed2: s2}
}

// point seeds the generator for point i and fills sd with √v.
func (w *smWork) point(i int, v []float64) {
	// SplitMix64 finaliser of i decorrelates neighbouring points' streams.
	z := uint64(i) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	w.src.Seed(w.seed1^z, w.seed2+uint64(i))
	for c := range w.sd {
		w.sd[c] = math.Sqrt(math.Max(v[c], 0))
	}
}

// sampleLogSoftmax draws one reparameterised sample f = μ + sd ⊙ ε (the
// noise goes to eps), overwrites f with its log-softmax and p with its
// softmax.
func sampleLogSoftmax(rng *rand.Rand, mu, sd, eps, f, p []float64) {
	mx := math.Inf(-1)
	for c := range mu {
		e := rng.NormFloat64()
		eps[c] = e
		f[c] = mu[c] + sd[c]*e
		mx = math.Max(mx, f[c])
	}
	z := 0.0
	for c := range f {
		p[c] = math.Exp(f[c] - mx)
		z += p[c]
	}
	lz := mx + math.Log(z)
	for c := range f {
		f[c] -= lz
		p[c] /= z
	}
}

// ExpectedLogLik returns the Monte Carlo estimate
// Σ_n mean_s log softmax(μ_n + √v_n ⊙ ε_ns)_{y_n} and its exact gradients
// (see the type documentation).
func (s *Softmax) ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, rng *rand.Rand) float64 {
	C, S := s.classes, s.samples
	n := checkLens(y, mu, variance, C)
	checkGradLens(dmu, dvar, n*C)
	checkParamLen(dparams, 0)
	s1, s2 := seeds(rng)
	inv := 1 / float64(S)
	newWork := func() *smWork { return newSMWork(C, s1, s2) }
	return chunkSum(n, n*S*C, s.workers, newWork, func(w *smWork, i0, i1 int) float64 {
		sum := 0.0
		for i := i0; i < i1; i++ {
			lo, hi := i*C, (i+1)*C
			m := mu[lo:hi]
			w.point(i, variance[lo:hi])
			var gm, gv []float64
			if dmu != nil {
				gm, gv = dmu[lo:hi], dvar[lo:hi]
				for c := range gm {
					gm[c], gv[c] = 0, 0
				}
			}
			cls := classIndex(y[i], C)
			if cls < 0 {
				sum = math.Inf(-1)
				continue
			}
			e := 0.0
			for range S {
				sampleLogSoftmax(w.rng, m, w.sd, w.eps, w.f, w.p)
				e += w.f[cls]
				for c := range gm {
					r := -w.p[c]
					if c == cls {
						r++
					}
					gm[c] += r
					if w.sd[c] > 0 {
						gv[c] += r * w.eps[c] / (2 * w.sd[c])
					} else {
						gv[c] -= 0.5 * w.p[c] * (1 - w.p[c])
					}
				}
			}
			sum += e * inv
			for c := range gm {
				gm[c] *= inv
				gv[c] *= inv
			}
		}
		return sum
	})
}

// LogPredictive writes the Monte Carlo estimate log mean_s softmax(f_s)_y,
// computed as a log-sum-exp over the samples.
func (s *Softmax) LogPredictive(dst, y, mu, variance []float64, rng *rand.Rand) {
	C, S := s.classes, s.samples
	n := checkLens(y, mu, variance, C)
	if len(dst) != n {
		panic(fmt.Sprintf("likelihood: LogPredictive destination has length %d, want %d", len(dst), n))
	}
	s1, s2 := seeds(rng)
	newWork := func() *smWork { return newSMWork(C, s1, s2) }
	chunkSum(n, n*S*C, s.workers, newWork, func(w *smWork, i0, i1 int) float64 {
		for i := i0; i < i1; i++ {
			cls := classIndex(y[i], C)
			if cls < 0 {
				dst[i] = math.Inf(-1)
				continue
			}
			m := mu[i*C : (i+1)*C]
			w.point(i, variance[i*C:(i+1)*C])
			mx, acc := math.Inf(-1), 0.0
			for range S {
				sampleLogSoftmax(w.rng, m, w.sd, w.eps, w.f, w.p)
				if l := w.f[cls]; l > mx {
					acc = acc*math.Exp(mx-l) + 1
					mx = l
				} else {
					acc += math.Exp(l - mx)
				}
			}
			dst[i] = mx + math.Log(acc/float64(S))
		}
		return 0
	})
}

// PredictY writes the Monte Carlo estimates of the C class probabilities
// mean_s softmax(f_s) of every point into mean (point-major, length N·C)
// and, if variance is non-nil, their Bernoulli variances p(1 − p).
func (s *Softmax) PredictY(mean, variance, mu, fvar []float64, rng *rand.Rand) {
	C, S := s.classes, s.samples
	checkPredictLens(mean, variance, mu, fvar, C, C)
	s1, s2 := seeds(rng)
	n := len(mu) / C
	newWork := func() *smWork { return newSMWork(C, s1, s2) }
	chunkSum(n, n*S*C, s.workers, newWork, func(w *smWork, i0, i1 int) float64 {
		for i := i0; i < i1; i++ {
			m := mu[i*C : (i+1)*C]
			w.point(i, fvar[i*C:(i+1)*C])
			out := mean[i*C : (i+1)*C]
			for c := range out {
				out[c] = 0
			}
			for range S {
				sampleLogSoftmax(w.rng, m, w.sd, w.eps, w.f, w.p)
				for c := range out {
					out[c] += w.p[c]
				}
			}
			for c := range out {
				out[c] /= float64(S)
				if variance != nil {
					variance[i*C+c] = out[c] * (1 - out[c])
				}
			}
		}
		return 0
	})
}
