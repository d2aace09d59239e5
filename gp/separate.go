package gp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Separate is a model of P outputs, each an independent single-output
// Model with its own kernel hyperparameters, likelihood, inducing inputs,
// variational distributions and mean function (GPflow's
// "SeparateIndependent" outputs). Unlike a Model with the
// likelihood.IndependentGaussian likelihood, whose P latent functions share
// one kernel, nothing is shared, so training a Separate is training its P
// models side by side on the same mini-batches.
//
// It implements the interfaces train.Fit uses: its flat parameter vector
// is the concatenation of the outputs' (output p at Offset(p)), its
// objective the sum of theirs, and its targets P values per row,
// point-major, with NaN marking a missing value (train.MultiOutputModel).
// Output p's term of a batch of n rows, drawn from nTotal, is its Model's
// bound on the rows where output p is observed with the expected
// log-likelihood scaled by nTotal/n (not by the observed count): the
// estimate is unbiased for the sum over output p's observed rows of the
// whole data set, and a batch in which output p is missing everywhere
// contributes −KL of its variational distributions alone. With no target
// missing, Separate's gradient for output p is exactly that of output p's
// Model alone on the same batch, so train.Fit (Adam works elementwise)
// gives each output the parameters it would reach trained by itself with
// the same seed and configuration.
//
// Natural-gradient steps (train.NaturalGradientModel, train.NaturalUpdater)
// update every output's q(u) (and q(v⊥)) from the joint gradient through
// NaturalGradient over the factors of NaturalFactors.
type Separate struct {
	models []*Model
	offs   []int // offs[p] is output p's first parameter; offs[P] the total
	d      int
}

// NewSeparate returns the model of the P = len(models) outputs models,
// each a Model of one output (NumOutputs 1) on the same input dimension.
// The models become part of the Separate, which changes their parameters
// when it is trained; one Model must not appear twice.
func NewSeparate(models []*Model) (*Separate, error) {
	if len(models) == 0 {
		return nil, errors.New("gp: NewSeparate: no output models")
	}
	s := &Separate{models: append([]*Model(nil), models...), offs: make([]int, len(models)+1)}
	for p, m := range models {
		if m == nil {
			return nil, fmt.Errorf("gp: NewSeparate: output %d has a nil model", p)
		}
		if m.NumOutputs() != 1 {
			return nil, fmt.Errorf("gp: NewSeparate: output %d is a model of %d outputs, want one", p, m.NumOutputs())
		}
		if p == 0 {
			s.d = m.d
		} else if m.d != s.d {
			return nil, fmt.Errorf("%w: NewSeparate: output %d takes %d inputs, output 0 takes %d", ErrShape, p, m.d, s.d)
		}
		for q := 0; q < p; q++ {
			if models[q] == m {
				return nil, fmt.Errorf("gp: NewSeparate: outputs %d and %d are the same model", q, p)
			}
		}
		s.offs[p+1] = s.offs[p] + m.NumParams()
	}
	return s, nil
}

// NumOutputs returns P. It implements train.MultiOutputModel.
func (s *Separate) NumOutputs() int { return len(s.models) }

// Output returns the model of output p (not a copy: it shares the
// parameters Separate trains). It panics for p out of range.
func (s *Separate) Output(p int) *Model { return s.models[p] }

// Offset returns the index of output p's first parameter in the flat
// vector (p = NumOutputs gives NumParams).
func (s *Separate) Offset(p int) int { return s.offs[p] }

// InputDim returns the number of input columns.
func (s *Separate) InputDim() int { return s.d }

// NumParams returns the length of the flat parameter vector, the sum of the
// outputs'.
func (s *Separate) NumParams() int { return s.offs[len(s.models)] }

// Params copies the outputs' parameters, concatenated, into dst (len
// NumParams; like a slice index, it panics if dst is shorter).
func (s *Separate) Params(dst []float64) {
	for p, m := range s.models {
		m.Params(dst[s.offs[p]:s.offs[p+1]])
	}
}

// SetParams sets every output's parameters from their part of src. It
// returns an error, leaving every output unchanged, if src has the wrong
// length or an output refuses its part.
func (s *Separate) SetParams(src []float64) error {
	if len(src) != s.NumParams() {
		return fmt.Errorf("%w: %d parameters, want %d", ErrShape, len(src), s.NumParams())
	}
	old := make([]float64, s.NumParams())
	s.Params(old)
	for p, m := range s.models {
		if err := m.SetParams(src[s.offs[p]:s.offs[p+1]]); err != nil {
			for q := 0; q < p; q++ {
				_ = s.models[q].SetParams(old[s.offs[q]:s.offs[q+1]])
			}
			return fmt.Errorf("output %d: %w", p, err)
		}
	}
	return nil
}

// SetThreads sets every output's goroutine budget (see Model.SetThreads);
// the outputs are evaluated one after the other, each with that budget.
func (s *Separate) SetThreads(t int) {
	for _, m := range s.models {
		m.SetThreads(t)
	}
}

// checkBatch checks x (n×d, finite) and y (n·P values, finite or NaN).
func (s *Separate) checkBatch(x *mat.Dense, y []float64) (int, error) {
	if err := s.models[0].checkX(x); err != nil {
		return 0, err
	}
	n, _ := x.Dims()
	if err := checkTargets(y, n, len(s.models), true); err != nil {
		return 0, err
	}
	return n, nil
}

// observed returns the rows of x and the values of output p where y (P
// values per row) is not NaN; x itself when every row is observed.
func (s *Separate) observed(x *mat.Dense, y []float64, p int) (*mat.Dense, []float64) {
	P := len(s.models)
	n, d := x.Dims()
	yp := make([]float64, 0, n)
	var rows []int
	for i := 0; i < n; i++ {
		if v := y[i*P+p]; !math.IsNaN(v) {
			yp = append(yp, v)
			rows = append(rows, i)
		}
	}
	if len(rows) == n || len(rows) == 0 {
		return x, yp
	}
	xp := mat.NewDense(len(rows), d, nil)
	for k, i := range rows {
		copy(xp.RawRowView(k), x.RawRowView(i))
	}
	return xp, yp
}

// ValidateData checks a training set before training (train.Fit calls it
// once): x must be n×d with finite entries and y hold n·P values, finite
// or NaN (missing), and each output's model must accept its observed
// values, of which there must be at least one. Errors wrap ErrShape or
// ErrValue.
func (s *Separate) ValidateData(x *mat.Dense, y []float64) error {
	if _, err := s.checkBatch(x, y); err != nil {
		return err
	}
	for p, m := range s.models {
		xp, yp := s.observed(x, y, p)
		if len(yp) == 0 {
			return fmt.Errorf("%w: output %d has no observed target", ErrValue, p)
		}
		if err := m.ValidateData(xp, yp); err != nil {
			return fmt.Errorf("output %d: %w", p, err)
		}
	}
	return nil
}

// Objective returns the sum over outputs of their mini-batch bounds on the
// batch x, y (P values per row, NaN missing) drawn from nTotal rows, as
// described for Separate, and if grad is non-nil writes its gradient
// (len NumParams). It implements train.Model.
func (s *Separate) Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error) {
	n, err := s.checkBatch(x, y)
	if err != nil {
		return 0, err
	}
	if nTotal < 1 {
		return 0, fmt.Errorf("%w: nTotal = %d", ErrValue, nTotal)
	}
	if grad != nil && len(grad) != s.NumParams() {
		return 0, fmt.Errorf("%w: gradient has length %d, want %d", ErrShape, len(grad), s.NumParams())
	}
	scale := float64(nTotal) / float64(n)
	var total float64
	for p, m := range s.models {
		var g []float64
		if grad != nil {
			g = grad[s.offs[p]:s.offs[p+1]]
		}
		xp, yp := s.observed(x, y, p)
		var f float64
		if len(yp) == 0 {
			f, err = m.klObjective(x, g)
		} else {
			f, err = m.scaledObjective(xp, yp, scale, g)
		}
		if err != nil {
			return 0, fmt.Errorf("output %d: %w", p, err)
		}
		total += f
	}
	return total, nil
}

// klObjective returns −KL_u − KL_v, the bound of a batch without
// observations, and if grad is non-nil writes its gradient. The forward
// pass needs inputs; it runs on the first row of x, whose marginals do not
// enter the value.
func (mod *Model) klObjective(x *mat.Dense, grad []float64) (float64, error) {
	x1 := mat.NewDense(1, mod.d, append([]float64(nil), x.RawRowView(0)...))
	if err := mod.forward(x1); err != nil {
		return 0, err
	}
	ws := &mod.ws
	bound := -ws.klu - ws.klv
	mod.last = Terms{Scale: 0, KLU: ws.klu, KLV: ws.klv, JitterUU: ws.jitU, JitterVV: ws.jitV, Bound: bound}
	if math.IsNaN(bound) || math.IsInf(bound, 0) {
		return bound, fmt.Errorf("%w: bound is %g", ErrValue, bound)
	}
	if grad == nil {
		return bound, nil
	}
	clearVec(mod.cfg.threads, grad)
	zero := make([]float64, mod.nl)
	if err := mod.backward(zero, make([]float64, mod.nl), nil, -1, grad, nil); err != nil {
		return bound, err
	}
	return bound, nil
}

// NaturalFactors returns the Gaussian variational factors of every output
// (Model.NaturalFactors), located in Separate's flat parameter vector.
func (s *Separate) NaturalFactors() []GaussianFactor {
	var fs []GaussianFactor
	for p, m := range s.models {
		for _, f := range m.NaturalFactors() {
			f.Mean += s.offs[p]
			f.Chol += s.offs[p]
			fs = append(fs, f)
		}
	}
	return fs
}

// natural returns the natural-gradient stepper over every output's factors.
func (s *Separate) natural() *NaturalGradient {
	return &NaturalGradient{ObjectiveModel: s, Factors: s.NaturalFactors(), Threads: max(s.models[0].cfg.threads, 0)}
}

// VariationalParams marks the entries of every output's variational
// factors (len(mask) = NumParams). It implements
// train.NaturalGradientModel.
func (s *Separate) VariationalParams(mask []bool) { s.natural().VariationalParams(mask) }

// NaturalStep takes one natural-gradient step of size gamma ∈ (0, 1] on
// every output's factors from the gradient of Objective on the batch. It
// implements train.NaturalGradientModel.
func (s *Separate) NaturalStep(x *mat.Dense, y []float64, nTotal int, gamma float64) error {
	return s.natural().NaturalStep(x, y, nTotal, gamma)
}

// NaturalUpdate writes into next the parameters after a natural-gradient
// step of size gamma from params, where grad is the objective's gradient
// at params (see NaturalGradient.NaturalUpdate). It implements
// train.NaturalUpdater.
func (s *Separate) NaturalUpdate(params, grad, next []float64, gamma float64) error {
	return s.natural().NaturalUpdate(params, grad, next, gamma)
}

// RandomState returns the states of the outputs' random streams, each
// preceded by its length. It implements train.RandomStater.
func (s *Separate) RandomState() []byte {
	var out []byte
	for _, m := range s.models {
		st := m.RandomState()
		out = binary.LittleEndian.AppendUint32(out, uint32(len(st)))
		out = append(out, st...)
	}
	return out
}

// SetRandomState restores a state RandomState returned. A state that is
// not one is an error wrapping ErrValue, and leaves every stream as it was.
func (s *Separate) SetRandomState(state []byte) error {
	parts := make([][]byte, len(s.models))
	rest := state
	for p := range parts {
		if len(rest) < 4 {
			return fmt.Errorf("%w: random state: truncated at output %d", ErrValue, p)
		}
		k := binary.LittleEndian.Uint32(rest)
		if uint64(k) > uint64(len(rest)-4) {
			return fmt.Errorf("%w: random state: output %d claims %d bytes, %d left", ErrValue, p, k, len(rest)-4)
		}
		parts[p], rest = rest[4:4+k], rest[4+k:]
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: random state: %d bytes after the last output", ErrValue, len(rest))
	}
	old := make([][]byte, len(s.models))
	for p, m := range s.models {
		old[p] = m.RandomState()
		if err := m.SetRandomState(parts[p]); err != nil {
			for q := 0; q < p; q++ {
				_ = s.models[q].SetRandomState(old[q])
			}
			return fmt.Errorf("output %d: %w", p, err)
		}
	}
	return nil
}

// PredictF returns the marginal means and variances of every output's
// latent function at the rows of x: n×P matrices, column p for output p.
// Each output's model must have one latent function.
func (s *Separate) PredictF(x mat.Matrix) (mean, variance *mat.Dense, err error) {
	return s.predict(x, false)
}

// PredictY returns the predictive means and variances of every output's
// observations at the rows of x (n×P, column p for output p). Each
// output's model must have one latent function.
func (s *Separate) PredictY(x mat.Matrix) (mean, variance *mat.Dense, err error) {
	return s.predict(x, true)
}

// predict gathers the outputs' PredictF or PredictY columns.
func (s *Separate) predict(x mat.Matrix, obs bool) (mean, variance *mat.Dense, err error) {
	for p, m := range s.models {
		if m.nl != 1 {
			return nil, nil, fmt.Errorf("gp: Separate: output %d has %d latent functions, want one", p, m.nl)
		}
		pr, err := m.Predictor(0)
		if err != nil {
			return nil, nil, fmt.Errorf("output %d: %w", p, err)
		}
		var mu, vr *mat.Dense
		if obs {
			mu, vr, err = pr.PredictY(x)
		} else {
			mu, vr, err = pr.PredictF(x)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("output %d: %w", p, err)
		}
		if p == 0 {
			n, _ := mu.Dims()
			mean, variance = mat.NewDense(n, len(s.models), nil), mat.NewDense(n, len(s.models), nil)
		}
		mean.SetCol(p, mu.RawMatrix().Data)
		variance.SetCol(p, vr.RawMatrix().Data)
	}
	return mean, variance, nil
}
