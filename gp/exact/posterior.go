package exact

import (
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/gp/kernel"
)

// predictChunk is the number of test points whose N×chunk cross-covariance
// is formed at a time by Predict.
const predictChunk = 256

// Posterior is the exact GP posterior for one training set at fixed
// hyperparameters: it holds a copy of the training inputs, the Cholesky
// factor L of K̃ = K + σ²I (plus any jitter) and α = K̃⁻¹y. It uses the
// model's kernel, so changing the kernel's parameters afterwards (for
// example through the model's SetParams) invalidates it.
//
// Predict may be called from several goroutines at once.
type Posterior struct {
	kern    kernel.Kernel
	x       *mat.Dense
	l       []float64 // N×N, L in the lower triangle (the rest is not read)
	alpha   []float64
	noise   float64
	jitter  float64
	threads int
}

// Posterior factors K(x, x) + σ²I for the data x, y at the model's current
// parameters and returns the predictive distribution. The model's N×N
// workspace becomes the posterior's factor (the model allocates a new one
// at its next evaluation), so the posterior costs no second N×N matrix.
func (md *Model) Posterior(x *mat.Dense, y []float64) (*Posterior, error) {
	n, err := md.checkData("Posterior", x, y)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("exact: Posterior: no training data")
	}
	st, err := md.factor(x, y)
	if err != nil {
		return nil, err
	}
	p := &Posterior{
		kern: md.kern, x: mat.DenseCopyOf(x), l: md.buf, alpha: st.alpha,
		noise: st.noise, jitter: st.jitter, threads: md.threads,
	}
	md.buf = nil
	return p, nil
}

// NoiseVariance returns σ², to add to the latent variance for the
// predictive variance of y.
func (p *Posterior) NoiseVariance() float64 { return p.noise }

// Jitter returns the diagonal jitter the jitter policy added to K̃ (0 if
// none).
func (p *Posterior) Jitter() float64 { return p.jitter }

// Predict writes the predictive mean k*ᵀα and variance k** − k*ᵀK̃⁻¹k* of
// the latent function at the rows of xs into mean and variance (each of
// length rows(xs); variance may be nil). The variance of y adds
// NoiseVariance.
func (p *Posterior) Predict(xs *mat.Dense, mean, variance []float64) error {
	if xs == nil {
		return fmt.Errorf("exact: Predict: nil inputs")
	}
	t, d := xs.Dims()
	if d != p.kern.Dim() {
		return fmt.Errorf("exact: Predict: inputs have %d columns, the kernel dimension is %d", d, p.kern.Dim())
	}
	if len(mean) != t || (variance != nil && len(variance) != t) {
		return fmt.Errorf("exact: Predict: %d inputs but mean has %d and variance %d values", t, len(mean), len(variance))
	}
	if err := checkFinite("Predict", "prediction inputs", xs); err != nil {
		return err
	}
	if t == 0 {
		return nil
	}
	n, _ := p.x.Dims()
	bi := blas.Implementation{Threads: p.threads}
	c := min(predictChunk, t)
	ks := mat.NewDense(n, c, nil)
	kdiag := make([]float64, c)
	for t0 := 0; t0 < t; t0 += c {
		tc := min(c, t-t0)
		xc := xs.Slice(t0, t0+tc, 0, d).(*mat.Dense)
		kc := ks.Slice(0, n, 0, tc).(*mat.Dense)
		p.kern.Matrix(kc, p.x, xc)
		kr := kc.RawMatrix()
		bi.Dgemv(gblas.Trans, n, tc, 1, kr.Data, kr.Stride, p.alpha, 1, 0, mean[t0:t0+tc], 1)
		if variance == nil {
			continue
		}
		// V = L⁻¹K_x*, variance = k** − Σ_i V_ij².
		bi.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, n, tc, 1, p.l, n, kr.Data, kr.Stride)
		p.kern.Diag(kdiag[:tc], xc)
		vc := variance[t0 : t0+tc]
		copy(vc, kdiag[:tc])
		for i := 0; i < n; i++ {
			for j, v := range kr.Data[i*kr.Stride : i*kr.Stride+tc] {
				vc[j] -= v * v
			}
		}
		for j := range vc {
			vc[j] = math.Max(vc[j], 0) // rounding can make a tiny variance negative
		}
	}
	return nil
}
