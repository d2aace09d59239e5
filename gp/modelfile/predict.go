package modelfile

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/internal/nilcheck"
)

// Prediction holds predictions at n test points in the original units of
// the data: the standardization of the Bundle has been undone.
type Prediction struct {
	// FMean and FVar are the marginal means and variances of the C latent
	// functions (n×C). For a Gaussian likelihood the latent function is
	// expressed in target units. For a multi-output likelihood
	// (likelihood.MultiGaussian) of P outputs they are those of the
	// outputs' latent functions f_p = Σ_l W_pl·g_l (n×P), in the units of
	// each target.
	FMean, FVar *mat.Dense
	// YMean and YVar are the predictive means and variances of the
	// observations (n×C, or n×P for P outputs). For C-class likelihoods
	// YMean holds the class probabilities (YVar may then be nil).
	YMean, YVar *mat.Dense
}

// MaxInput bounds the magnitude of (standardized) test inputs that Predict
// and LogPredictive accept. Squared distances between inputs of this size
// are still far from overflowing float64.
const MaxInput = 1e100

// InputError reports a test input that Predict and LogPredictive refuse:
// a NaN or infinite value, or one more than MaxInput training standard
// deviations from the training mean. It wraps gp.ErrValue, so errors.Is(err,
// gp.ErrValue) holds, and gives the position so that callers reading x from
// a file can name the line and column.
type InputError struct {
	Row, Col int     // 0-based position of the value in x
	Value    float64 // the value as given
	// Scaled is the value after standardization, in training standard
	// deviations from the mean when Standardized is set (the bundle has a
	// Standardizer), else the value itself. It is the value compared with
	// MaxInput; it is not set for a NaN or infinite input.
	Scaled       float64
	Standardized bool
}

// Error describes the input and why it is refused.
func (e *InputError) Error() string {
	if math.IsNaN(e.Value) || math.IsInf(e.Value, 0) {
		return fmt.Sprintf("%v: input [%d][%d] is %g", gp.ErrValue, e.Row, e.Col, e.Value)
	}
	return fmt.Sprintf("%v: input [%d][%d] = %g is %g training standard deviations from the mean, beyond %g", gp.ErrValue, e.Row, e.Col, e.Value, e.Scaled, MaxInput)
}

// Unwrap returns gp.ErrValue.
func (e *InputError) Unwrap() error { return gp.ErrValue }

// Predictor is an immutable snapshot of a Bundle for prediction in the
// original units of the data. Its methods are safe for concurrent use.
// It holds a gp.Predictor and a copy of the Standardizer, so changing the
// bundle's model (its parameters, by training for instance) or its
// Standardizer afterwards does not change its predictions, with the
// exception gp.Predictor documents for a kernel or likelihood that cannot
// be copied (those of this module can).
type Predictor struct {
	p   *gp.Predictor
	std *data.Standardizer
	d   int
	// hetero is set for the heteroscedastic likelihood, whose second
	// latent function is a log noise variance.
	hetero bool
	// multi is a copy of a multi-output likelihood, which maps the latent
	// functions to the outputs; nil for other likelihoods.
	multi *likelihood.MultiGaussian
	// parts holds one single-output Predictor per output of a model of
	// separate outputs (Bundle.Separate); nil otherwise.
	parts []*Predictor
}

// Predictor returns a snapshot of the bundle's current posterior. batch
// bounds the number of test points processed at once (≤ 0: the gp
// default). The bundle's Standardizer, if any, must be one Save would
// accept (one mean and positive scale per input, finite; a standardized
// target not for the built-in non-Gaussian likelihoods); otherwise it
// returns an error wrapping ErrFormat. A likelihood of your own may have a
// standardized target if it has one latent function, which Predict then
// maps back to target units as the Gaussian's; with several latent
// functions it is an error wrapping ErrFormat, as their columns need not
// be in target units.
func (b *Bundle) Predictor(batch int) (*Predictor, error) {
	if b != nil && b.Separate != nil {
		return b.separatePredictor(batch)
	}
	if b == nil || b.Model == nil {
		return nil, fmt.Errorf("modelfile: nil bundle or model")
	}
	d, _, _, _ := b.Model.Dims()
	if s := b.Standardizer; s != nil {
		// A likelihood of the caller's own (one Save cannot write) with
		// one latent function may have standardized targets, which
		// Predict maps back as for the Gaussian; the built-in ones other
		// than the Gaussian may not, nor may one of the caller's with
		// several latent functions, whose columns need not be in target
		// units (class probabilities, a log noise variance).
		lik := "gaussian"
		if lj, err := encodeLikType(b.Model.Likelihood()); err == nil {
			lik = lj.Type
		} else if l := b.Model.Likelihood(); l.NumLatent() > 1 {
			lik = fmt.Sprintf("%T (%d latent functions)", l, l.NumLatent())
		}
		if err := checkStandardizer(s, d, lik); err != nil {
			return nil, err
		}
		if err := checkOutputStandardizer(s, lik, b.Model.NumOutputs()); err != nil {
			return nil, err
		}
	}
	p, err := b.Model.Predictor(batch)
	if err != nil {
		return nil, err
	}
	_, hetero := b.Model.Likelihood().(*likelihood.Heteroscedastic)
	out := &Predictor{p: p, d: d, hetero: hetero}
	if g, ok := b.Model.Likelihood().(*likelihood.MultiGaussian); ok {
		out.multi = g.Clone().(*likelihood.MultiGaussian)
	}
	if s := b.Standardizer; s != nil {
		out.std = &data.Standardizer{
			XMean: append([]float64(nil), s.XMean...), XScale: append([]float64(nil), s.XScale...),
			YMean: s.YMean, YScale: s.YScale,
			YMeans: append([]float64(nil), s.YMeans...), YScales: append([]float64(nil), s.YScales...),
		}
		if len(s.YMeans) == 0 {
			out.std.YMeans, out.std.YScales = nil, nil
		}
	}
	return out, nil
}

// Predict is Predictor(0) followed by Predict. Build one Predictor for
// repeated or concurrent predictions.
func (b *Bundle) Predict(x mat.Matrix) (*Prediction, error) {
	p, err := b.Predictor(0)
	if err != nil {
		return nil, err
	}
	return p.Predict(x)
}

// LogPredictive is Predictor(0) followed by LogPredictive.
func (b *Bundle) LogPredictive(x mat.Matrix, y []float64) ([]float64, error) {
	p, err := b.Predictor(0)
	if err != nil {
		return nil, err
	}
	return p.LogPredictive(x, y)
}

// standardize returns a standardized copy of x after checking its shape
// and values.
func (p *Predictor) standardize(x mat.Matrix) (*mat.Dense, error) {
	if nilcheck.IsNil(x) {
		return nil, fmt.Errorf("%w: nil inputs", gp.ErrShape)
	}
	r, c := x.Dims()
	if c != p.d {
		return nil, fmt.Errorf("%w: inputs have %d columns, the model was trained on %d", gp.ErrShape, c, p.d)
	}
	xs := mat.DenseCopyOf(x)
	for i := 0; i < r; i++ {
		for j, v := range xs.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, &InputError{Row: i, Col: j, Value: v}
			}
		}
	}
	if p.std != nil {
		if err := p.std.TransformX(xs); err != nil {
			return nil, err
		}
	}
	// Inputs near the float64 limits overflow when standardized, and
	// squared distances between inputs beyond MaxInput overflow in the
	// kernels; both would turn every prediction of the batch into NaN.
	for i := 0; i < r; i++ {
		for j, v := range xs.RawRowView(i) {
			if !(math.Abs(v) <= MaxInput) {
				return nil, &InputError{Row: i, Col: j, Value: x.At(i, j), Scaled: v, Standardized: p.std != nil}
			}
		}
	}
	return xs, nil
}

// Predict returns the latent and predictive means and variances at the
// rows of x, given in original (unstandardized) units.
func (p *Predictor) Predict(x mat.Matrix) (*Prediction, error) {
	if p.parts != nil {
		return p.predictSeparate(x)
	}
	xs, err := p.standardize(x)
	if err != nil {
		return nil, err
	}
	fm, fv, err := p.p.PredictF(xs)
	if err != nil {
		return nil, err
	}
	ym, yv, err := p.p.PredictY(xs)
	if err != nil {
		return nil, err
	}
	if p.multi != nil {
		fm, fv = p.outputMarginals(fm, fv)
	}
	if s := p.std; s != nil && len(s.YMeans) > 0 {
		// n×P matrices, contiguous: element i is output i mod P.
		s.InverseY(fm.RawMatrix().Data, fv.RawMatrix().Data)
		s.InverseY(ym.RawMatrix().Data, yv.RawMatrix().Data)
	} else if s != nil && (s.YMean != 0 || s.YScale != 1) && p.hetero {
		inverseHetero(s, fm, fv, ym, yv)
	} else if s != nil && (s.YMean != 0 || s.YScale != 1) {
		// The other models with a standardized target (Gaussian,
		// Student-t) have one latent function, so the n×1 matrices are
		// contiguous.
		s.InverseY(fm.RawMatrix().Data, fv.RawMatrix().Data)
		var yvd []float64
		if yv != nil {
			yvd = yv.RawMatrix().Data
		}
		s.InverseY(ym.RawMatrix().Data, yvd)
	}
	// Checked in the original units: a large target scale can overflow
	// predictions that were finite when standardized.
	for _, m := range []*mat.Dense{fm, fv, ym, yv} {
		if m == nil {
			continue
		}
		stride := m.RawMatrix().Stride
		for i, v := range m.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, &gp.PointError{Point: i / stride, What: "a prediction", Value: v, Hint: "extreme inputs, hyperparameters or target scale"}
			}
		}
	}
	return &Prediction{FMean: fm, FVar: fv, YMean: ym, YVar: yv}, nil
}

// LogPredictive returns log p(y_n | x_n, data) for every test point, as a
// density in the original units of the target. For P outputs y holds P
// values per point (NaN for a missing one; see gp.MultiOutput) and the
// density is that of the point's observed outputs.
func (p *Predictor) LogPredictive(x mat.Matrix, y []float64) ([]float64, error) {
	if p.parts != nil {
		return p.logPredictiveSeparate(x, y)
	}
	xs, err := p.standardize(x)
	if err != nil {
		return nil, err
	}
	P := p.p.NumOutputs()
	if r, _ := xs.Dims(); r*P != len(y) {
		return nil, fmt.Errorf("%w: %d input rows of %d outputs, %d targets", gp.ErrShape, r, P, len(y))
	}
	ys := append([]float64(nil), y...)
	if s := p.std; s != nil {
		s.TransformY(ys)
	}
	lp, err := p.p.LogPredictive(xs, ys)
	if err != nil {
		return nil, err
	}
	for i := range lp {
		if s := p.std; s != nil {
			for j, v := range ys[i*P : (i+1)*P] {
				if !math.IsNaN(v) {
					lp[i] += s.OutputLogDensityOffset(j)
				}
			}
		}
		if math.IsNaN(lp[i]) || math.IsInf(lp[i], 0) {
			return nil, &gp.PointError{Point: i, What: "log predictive density", Value: lp[i]}
		}
	}
	return lp, nil
}

// inverseHetero maps the heteroscedastic model's predictions (two columns:
// the mean function and the log noise variance; see
// likelihood.Heteroscedastic.PredictY) from standardized to original
// target units: the mean column as the Gaussian's, the log noise variance
// shifted by 2 log YScale, the noise variance scaled by YScale² and its
// variance by YScale⁴.
func inverseHetero(s *data.Standardizer, fm, fv, ym, yv *mat.Dense) {
	n, _ := fm.Dims()
	s2 := s.YScale * s.YScale
	shift := 2 * math.Log(s.YScale)
	for i := 0; i < n; i++ {
		fm.Set(i, 0, fm.At(i, 0)*s.YScale+s.YMean)
		fv.Set(i, 0, fv.At(i, 0)*s2)
		fm.Set(i, 1, fm.At(i, 1)+shift)
		ym.Set(i, 0, ym.At(i, 0)*s.YScale+s.YMean)
		ym.Set(i, 1, ym.At(i, 1)*s2)
		if yv != nil {
			yv.Set(i, 0, yv.At(i, 0)*s2)
			yv.Set(i, 1, yv.At(i, 1)*s2*s2)
		}
	}
}

// outputMarginals returns the marginal means and variances of the
// outputs' latent functions (n×P) from those of the latent functions
// (n×L) of a multi-output model.
func (p *Predictor) outputMarginals(gm, gv *mat.Dense) (fm, fv *mat.Dense) {
	n, _ := gm.Dims()
	P := p.multi.NumOutputs()
	fm, fv = mat.NewDense(n, P, nil), mat.NewDense(n, P, nil)
	p.multi.OutputMarginals(fm.RawMatrix().Data, fv.RawMatrix().Data, gm.RawMatrix().Data, gv.RawMatrix().Data)
	return fm, fv
}
