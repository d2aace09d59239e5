package data

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Standardizer maps inputs and targets to zero mean and unit variance
// with statistics fitted on training data only, and maps predictions back
// to the original units.
//
// A column counts as constant when its computed population standard
// deviation is at most 1e-12 times the largest absolute value in the
// column (or is zero): its scale is then left at 1, so that it is centred
// but not divided by zero. The same holds for the target. The threshold
// absorbs the rounding in the mean of equal values, but it also treats as
// constant a column that truly varies by less than 1e-12 of its magnitude
// (for example 1e6 + 1e-7·k): such a column is centred, not scaled.
//
// A Standardizer built by hand must pass Validate: the methods refuse
// (TransformX, InverseX) or panic on (TransformY, InverseY,
// LogDensityOffset) zero, negative or non-finite scales and non-finite
// means rather than produce NaN. The zero value is not valid.
type Standardizer struct {
	// XMean and XScale hold, per input column, the training mean and the
	// scale (the population standard deviation, or 1 for a column that
	// counts as constant; see above).
	XMean, XScale []float64
	// YMean and YScale are the training mean and scale of the target.
	YMean, YScale float64
	// YMeans and YScales, when not empty, hold the training mean and scale
	// of each of P target columns of a multi-output model (see
	// FitStandardizerOutputs); the targets are then stored point-major, P
	// per point, YMean must be 0 and YScale 1, and the Y methods scale
	// element i with the statistics of column i mod P.
	YMeans, YScales []float64
}

// FitStandardizerOutputs is FitStandardizer for p target columns stored
// point-major in y (n·p values; element i·p+j is column j of row i), each
// standardized on its own: NaN targets are missing and left out of the
// statistics. A column with no observed value, an infinite target, or a
// length that is not n·p is an error.
func FitStandardizerOutputs(x *mat.Dense, y []float64, p int) (*Standardizer, error) {
	s, err := FitStandardizer(x, nil)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	if p < 1 || len(y) != n*p {
		return nil, fmt.Errorf("data: FitStandardizerOutputs: %d rows in x and %d outputs but %d targets", n, p, len(y))
	}
	s.YMeans, s.YScales = make([]float64, p), make([]float64, p)
	col := make([]float64, 0, n)
	for j := 0; j < p; j++ {
		col = col[:0]
		for i := 0; i < n; i++ {
			if v := y[i*p+j]; !math.IsNaN(v) {
				col = append(col, v)
			}
		}
		if len(col) == 0 {
			return nil, fmt.Errorf("data: FitStandardizerOutputs: target column %d has no observed value", j+1)
		}
		m, sc, err := meanScale(col)
		if err != nil {
			return nil, fmt.Errorf("data: FitStandardizerOutputs: target column %d: %w", j+1, err)
		}
		s.YMeans[j], s.YScales[j] = m, sc
	}
	return s, nil
}

// NumOutputs returns the number of target columns the statistics are for:
// len(YMeans), or 1 when YMeans is empty.
func (s *Standardizer) NumOutputs() int {
	if len(s.YMeans) > 0 {
		return len(s.YMeans)
	}
	return 1
}

// yStat returns the mean and scale of target element i.
func (s *Standardizer) yStat(i int) (mean, scale float64) {
	if p := len(s.YMeans); p > 0 {
		return s.YMeans[i%p], s.YScales[i%p]
	}
	return s.YMean, s.YScale
}

// FitStandardizer computes the means and scales of the columns of x and of
// y (y may be nil, giving YMean 0 and YScale 1). It returns an error for
// empty or non-finite data or mismatched lengths.
func FitStandardizer(x *mat.Dense, y []float64) (*Standardizer, error) {
	if x == nil {
		return nil, fmt.Errorf("data: FitStandardizer: nil input matrix")
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil, fmt.Errorf("data: FitStandardizer: empty input matrix")
	}
	if y != nil && len(y) != n {
		return nil, fmt.Errorf("data: FitStandardizer: %d rows in x but %d targets", n, len(y))
	}
	s := &Standardizer{XMean: make([]float64, d), XScale: make([]float64, d), YScale: 1}
	col := make([]float64, n)
	for j := 0; j < d; j++ {
		mat.Col(col, j, x)
		m, sc, err := meanScale(col)
		if err != nil {
			return nil, fmt.Errorf("data: FitStandardizer: input column %d: %w", j+1, err)
		}
		s.XMean[j], s.XScale[j] = m, sc
	}
	if y != nil {
		m, sc, err := meanScale(y)
		if err != nil {
			return nil, fmt.Errorf("data: FitStandardizer: target: %w", err)
		}
		s.YMean, s.YScale = m, sc
	}
	return s, nil
}

// meanScale returns the mean and the population standard deviation of v
// (two-pass, compensated), or scale 1 if that deviation is at most
// 1e-12 × max|v| (see Standardizer).
func meanScale(v []float64) (mean, scale float64, err error) {
	var sum, maxAbs float64
	for i, a := range v {
		if math.IsNaN(a) || math.IsInf(a, 0) {
			return 0, 0, fmt.Errorf("non-finite value %v at row %d", a, i+1)
		}
		sum += a
		maxAbs = math.Max(maxAbs, math.Abs(a))
	}
	n := float64(len(v))
	// Values so large that their sum or squares could overflow are first
	// brought near 1 by a power of two (exact), and the statistics scaled
	// back; other data take the plain path, bit for bit as before.
	f := 1.0
	if maxAbs > 1e150 {
		_, e := math.Frexp(maxAbs)
		f = math.Ldexp(1, -e)
		sum = 0
		for _, a := range v {
			sum += a * f
		}
	}
	mean = sum / n
	var ss, comp float64
	for _, a := range v {
		dv := a*f - mean
		ss += dv * dv
		comp += dv
	}
	variance := (ss - comp*comp/n) / n
	scale = math.Sqrt(math.Max(variance, 0))
	mean, scale = mean/f, scale/f
	// A constant column has a computed spread of at most a few ulps of its
	// magnitude (from rounding in the mean); treat that as zero.
	if !(scale > 1e-12*maxAbs) || scale == 0 {
		scale = 1
	}
	return mean, scale, nil
}

// Validate reports whether s can be used: as many input means as scales,
// and every mean, YMean included, finite and every scale, YScale included,
// finite and positive. A Standardizer from FitStandardizer is always valid;
// Validate is for ones built by hand or read from elsewhere.
func (s *Standardizer) Validate() error {
	if s == nil {
		return fmt.Errorf("data: Standardizer: nil")
	}
	if len(s.XMean) != len(s.XScale) {
		return fmt.Errorf("data: Standardizer: %d means and %d scales", len(s.XMean), len(s.XScale))
	}
	if err := s.checkX(); err != nil {
		return err
	}
	return s.checkY()
}

// checkX reports an input mean that is not finite or an input scale that
// is not finite and positive.
func (s *Standardizer) checkX() error {
	for j, m := range s.XMean {
		if sc := s.XScale[j]; !finite(m) || !(sc > 0) || !finite(sc) {
			return fmt.Errorf("data: Standardizer: input column %d has mean %g and scale %g; want a finite mean and a finite positive scale", j+1, m, sc)
		}
	}
	return nil
}

// checkY is checkX for the target statistics; s may be nil.
func (s *Standardizer) checkY() error {
	if s == nil {
		return fmt.Errorf("data: Standardizer: nil")
	}
	if !finite(s.YMean) || !(s.YScale > 0) || !finite(s.YScale) {
		return fmt.Errorf("data: Standardizer: target has mean %g and scale %g; want a finite mean and a finite positive scale", s.YMean, s.YScale)
	}
	if len(s.YMeans) == 0 && len(s.YScales) == 0 {
		return nil
	}
	if len(s.YMeans) != len(s.YScales) {
		return fmt.Errorf("data: Standardizer: %d target means and %d target scales", len(s.YMeans), len(s.YScales))
	}
	if s.YMean != 0 || s.YScale != 1 {
		return fmt.Errorf("data: Standardizer: per-output target statistics with target mean %g and scale %g; want 0 and 1", s.YMean, s.YScale)
	}
	for j, m := range s.YMeans {
		if sc := s.YScales[j]; !finite(m) || !(sc > 0) || !finite(sc) {
			return fmt.Errorf("data: Standardizer: target column %d has mean %g and scale %g; want a finite mean and a finite positive scale", j+1, m, sc)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// check validates x and its shape against the input statistics, and the
// input statistics themselves.
func (s *Standardizer) check(x *mat.Dense) error {
	if s == nil {
		return fmt.Errorf("data: Standardizer: nil")
	}
	if x == nil {
		return fmt.Errorf("data: Standardizer: nil x")
	}
	_, d := x.Dims()
	if d != len(s.XMean) || d != len(s.XScale) {
		return fmt.Errorf("data: Standardizer: x has %d columns, the standardizer %d means and %d scales", d, len(s.XMean), len(s.XScale))
	}
	return s.checkX()
}

// TransformX standardizes x in place: x[i][j] = (x[i][j] - XMean[j]) / XScale[j].
// It returns an error, leaving x unchanged, if x is nil, its columns do not
// match the statistics, or the input statistics are not valid (see
// Validate).
func (s *Standardizer) TransformX(x *mat.Dense) error {
	if err := s.check(x); err != nil {
		return err
	}
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j, m := range s.XMean {
			v := (row[j] - m) / s.XScale[j]
			if math.IsInf(v, 0) && !math.IsInf(row[j], 0) {
				// The difference overflowed (values of opposite signs
				// near the float64 limit); the quotient need not.
				v = row[j]/s.XScale[j] - m/s.XScale[j]
			}
			row[j] = v
		}
	}
	return nil
}

// InverseX maps standardized inputs in x back to original units, in place.
// It returns the errors of TransformX.
func (s *Standardizer) InverseX(x *mat.Dense) error {
	if err := s.check(x); err != nil {
		return err
	}
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j, m := range s.XMean {
			row[j] = row[j]*s.XScale[j] + m
		}
	}
	return nil
}

// TransformY standardizes targets in place: y[i] = (y[i] - YMean) / YScale
// (with per-output statistics, those of column i mod P; a NaN, a missing
// target, stays NaN).
// It panics if s is nil or YMean is not finite or YScale not finite and
// positive (see Validate): such a Standardizer can only be built by hand,
// and would turn every target into ±Inf or NaN.
func (s *Standardizer) TransformY(y []float64) {
	s.mustY()
	for i := range y {
		m, sc := s.yStat(i)
		y[i] = (y[i] - m) / sc
	}
}

// InverseY maps standardized predictive means and variances back to the
// original units of the target, in place: mean·YScale + YMean and
// variance·YScale² (with per-output statistics, those of column i mod P
// for element i). Either slice may be nil. It panics on the
// Standardizers that TransformY panics on.
func (s *Standardizer) InverseY(mean, variance []float64) {
	s.mustY()
	for i := range mean {
		m, sc := s.yStat(i)
		mean[i] = mean[i]*sc + m
	}
	for i := range variance {
		_, sc := s.yStat(i)
		variance[i] *= sc * sc
	}
}

// LogDensityOffset returns the amount to add to a log predictive density
// computed on standardized targets to obtain the log density in the
// original units: −log(YScale); with per-output statistics, the offset of
// a density of output 0 (see OutputLogDensityOffset). It panics on the
// Standardizers that TransformY panics on.
func (s *Standardizer) LogDensityOffset() float64 {
	s.mustY()
	_, sc := s.yStat(0)
	return -math.Log(sc)
}

// OutputLogDensityOffset returns −log of the scale of target column j (of
// YScale when there are no per-output statistics): the amount to add to a
// log density of that column computed on standardized targets. It panics
// on the Standardizers that TransformY panics on, and for j outside
// [0, NumOutputs()).
func (s *Standardizer) OutputLogDensityOffset(j int) float64 {
	s.mustY()
	if j < 0 || j >= s.NumOutputs() {
		panic(fmt.Sprintf("data: Standardizer: target column %d of %d", j, s.NumOutputs()))
	}
	_, sc := s.yStat(j)
	return -math.Log(sc)
}

// mustY panics with the error of checkY, a programming error.
func (s *Standardizer) mustY() {
	if err := s.checkY(); err != nil {
		panic(err)
	}
}
