package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	gpmean "github.com/solvegp/solvegp/gp/mean"
)

// modelSpec describes the model to build, as given on the command line.
type modelSpec struct {
	kind        string
	m, m2       int
	kernel      string
	ard         bool
	lengthscale float64
	variance    float64
	lik         string
	noise       float64
	classes     int
	whiten      bool
	seed        uint64
	threads     int
	init        string // placement of Z and O: kmeans or greedy
	// mean is the prior mean function: "zero" (or "", none), "constant"
	// or "linear", or one per latent function, "constant-per-latent" or
	// "linear-per-latent" (train's -mean).
	mean string
	// names are the data file's column names (inputs first), nil without
	// a header; -kernel expressions may name input columns.
	names []string
	// bound is the bound mini-batch training maximizes (train's -bound).
	bound gp.BoundKind
}

func (s *modelSpec) register(fs *flag.FlagSet) {
	fs.StringVar(&s.kind, "model", "solvegp", "model: svgp, odvgp or solvegp")
	fs.IntVar(&s.m, "m", 100, "number of inducing points M")
	fs.IntVar(&s.m2, "m2", 100, "number of orthogonal inducing points M2 (odvgp and solvegp)")
	fs.StringVar(&s.kernel, "kernel", "rbf", "kernel expression: "+kernelNames+", joined by + and * with parentheses, each optionally on some input columns by @ and a list of 0-based indices or header names (rbf@0,1+periodic@time); every kernel starts with -lengthscale and -variance (white: -noise; periodic: period 1; rq: α = 1; linear and polynomial: offset 1), on standardized inputs")
	fs.BoolVar(&s.ard, "ard", false, "one lengthscale per input dimension (of each rbf, matern, periodic and rq kernel)")
	fs.Float64Var(&s.lengthscale, "lengthscale", 1, "initial lengthscale (on standardized inputs)")
	fs.Float64Var(&s.variance, "variance", 1, "initial kernel variance")
	fs.StringVar(&s.lik, "likelihood", "gaussian", "likelihood: gaussian, studentt (robust; scale √noise, ν = 4 to start, ν > 2), heteroscedastic (noise a second latent GP), bernoulli, poisson, robustmax or softmax")
	fs.Float64Var(&s.noise, "noise", 0.1, "initial Gaussian noise variance (on standardized targets)")
	fs.IntVar(&s.classes, "classes", 0, "number of classes for robustmax and softmax (0: largest label + 1)")
	fs.BoolVar(&s.whiten, "whiten", true, "use the whitened parameterization of q(u) and q(v⊥) (Appendix E); -whiten=false selects the unwhitened one of Algorithm 1, which with many inducing points (ill-conditioned K_uu) is far more sensitive to moves of Z and O and can converge much more slowly with Adam")
	fs.StringVar(&s.init, "init", "kmeans", "placement of Z and O: kmeans or greedy (kmeans: k-means centres, Z the first M, O the next M2; greedy: the training rows of largest residual variance under the initial kernel, as a pivoted Cholesky factorization picks them, among min(N, 100·(M+M2)) random rows: Z first, then O given Z; with many inputs give a -lengthscale near the typical distance between standardized inputs, about √d, or greedy picks nearly arbitrary rows)")
	fs.Uint64Var(&s.seed, "seed", 1, "random seed (k-means or greedy subsample, mini-batches, Monte Carlo)")
	fs.IntVar(&s.threads, "threads", 0, "goroutines per linear-algebra call (0: all CPUs)")
}

// check validates the spec before any data is read.
func (s *modelSpec) check() error {
	s.kind = strings.ToLower(s.kind)
	switch s.kind {
	case "svgp":
		s.m2 = 0
	case "odvgp", "solvegp", "solve-gp":
		s.kind = strings.ReplaceAll(s.kind, "-", "")
		if s.m2 < 1 {
			return fmt.Errorf("-m2 %d: %s needs at least one orthogonal inducing point", s.m2, s.kind)
		}
	default:
		return fmt.Errorf("-model %q: want svgp, odvgp or solvegp", s.kind)
	}
	if s.m < 1 {
		return fmt.Errorf("-m %d: need at least one inducing point", s.m)
	}
	s.init = strings.ToLower(s.init)
	if s.init != "kmeans" && s.init != "greedy" {
		return fmt.Errorf("-init %q: want kmeans or greedy", s.init)
	}
	if _, err := parseKernelExpr(s.kernel); err != nil {
		return err
	}
	switch s.lik {
	case "gaussian", "studentt", "heteroscedastic", "bernoulli", "poisson", "robustmax", "softmax":
	default:
		return fmt.Errorf("-likelihood %q: want gaussian, studentt, heteroscedastic, bernoulli, poisson, robustmax or softmax", s.lik)
	}
	for _, v := range []struct {
		name string
		v    float64
	}{{"lengthscale", s.lengthscale}, {"variance", s.variance}, {"noise", s.noise}} {
		if !(v.v > 0) || math.IsInf(v.v, 0) {
			return fmt.Errorf("-%s %g: must be positive and finite", v.name, v.v)
		}
	}
	if s.classes < 0 || s.classes == 1 || s.classes > maxClasses {
		return fmt.Errorf("-classes %d: need 2 to %d", s.classes, maxClasses)
	}
	if s.classes != 0 && s.lik != "robustmax" && s.lik != "softmax" {
		return fmt.Errorf("-classes %d: only for -likelihood robustmax or softmax, not %s", s.classes, s.lik)
	}
	switch s.mean {
	case "", "zero", "constant", "linear":
	case "constant-per-latent", "linear-per-latent":
		if s.lik != "robustmax" && s.lik != "softmax" && s.lik != "heteroscedastic" {
			return fmt.Errorf("-mean %s: only for a likelihood with several latent functions (robustmax, softmax, heteroscedastic), not %s", s.mean, s.lik)
		}
	default:
		return fmt.Errorf("-mean %q: want zero, constant, linear, constant-per-latent or linear-per-latent", s.mean)
	}
	return nil
}

// newMean returns the prior mean function on d standardized inputs for L
// latent functions, all parameters 0 at the start, or nil for the zero
// mean (the model then has no mean function).
func (s *modelSpec) newMean(d, L int) (gp.MeanFunction, error) {
	switch s.mean {
	case "constant":
		return gpmean.NewConstant(d, 0)
	case "linear":
		return gpmean.NewLinear(make([]float64, d), 0)
	case "constant-per-latent":
		return gpmean.NewConstantPerLatent(d, make([]float64, L))
	case "linear-per-latent":
		w := make([][]float64, L)
		for l := range w {
			w[l] = make([]float64, d)
		}
		return gpmean.NewLinearPerLatent(w, make([]float64, L))
	}
	return nil, nil
}

// maxClasses is the most classes a model file holds (gp/modelfile).
const maxClasses = 1 << 16

// standardizesY reports whether the likelihood's targets are standardized.
func (s *modelSpec) standardizesY() bool {
	return s.lik == "gaussian" || s.lik == "studentt" || s.lik == "heteroscedastic"
}

// studentTDoF is the Student-t's starting degrees of freedom: tails heavy
// enough to discount outliers, with a finite predictive variance.
const studentTDoF = 4

// studentTDoFFloor is the Student-t's lower bound of ν: above 2 the
// predictive variance that predict and eval report stays finite.
const studentTDoFFloor = 2

// likelihood builds the likelihood; for multi-class likelihoods the number
// of classes comes from -classes or the labels y.
func (s *modelSpec) likelihood(y []float64) (gp.Likelihood, error) {
	switch s.lik {
	case "gaussian":
		return likelihood.NewGaussian(s.noise)
	case "studentt":
		return likelihood.NewStudentT(math.Sqrt(s.noise), studentTDoF, likelihood.DegreesOfFreedomFloor(studentTDoFFloor))
	case "heteroscedastic":
		return likelihood.NewHeteroscedastic()
	case "bernoulli":
		return likelihood.NewBernoulli()
	case "poisson":
		return likelihood.NewPoisson()
	}
	c := s.classes
	if c == 0 {
		for _, v := range y {
			if v >= float64(c) && v < 1<<20 {
				c = int(v) + 1
			}
		}
		if c < 2 {
			c = 2
		}
		if c > maxClasses {
			return nil, fmt.Errorf("the largest label, %d, asks for %d classes, more than the %d a model file holds", c-1, c, maxClasses)
		}
	}
	if s.lik == "robustmax" {
		return likelihood.NewRobustMax(c)
	}
	return likelihood.NewSoftmax(c)
}

// checkLabels checks the targets of tab, read from file, with the
// likelihood's Validate and reports a bad one (likelihood.LabelError) as
// file:line:column.
func checkLabels(file string, tab *data.Table, lik gp.Likelihood) error {
	v, ok := lik.(interface{ Validate([]float64) error })
	if !ok {
		return nil
	}
	err := v.Validate(tab.Y)
	var le *likelihood.LabelError
	if errors.As(err, &le) {
		line, col := tab.Pos(le.Index, -1)
		return &data.ParseError{File: file, Line: line, Column: col, Msg: fmt.Sprintf("target %g: %s", le.Value, le.Rule)}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// build constructs the model on standardized training inputs x, placing
// Z and O by k-means or greedy selection (-init).
func (s *modelSpec) build(x *mat.Dense, lik gp.Likelihood) (*gp.Model, error) {
	k, z, o, err := s.prior(x)
	if err != nil {
		return nil, err
	}
	opts := []gp.Option{gp.WithWhitening(s.whiten), gp.WithSeed(s.seed), gp.WithThreads(s.threads), gp.WithBound(s.bound)}
	_, d := x.Dims()
	mf, err := s.newMean(d, lik.NumLatent())
	if err != nil {
		return nil, err
	}
	if mf != nil {
		opts = append(opts, gp.WithMean(mf))
	}
	switch s.kind {
	case "svgp":
		return gp.NewSVGP(k, lik, z, opts...)
	case "odvgp":
		return gp.NewODVGP(k, lik, z, o, opts...)
	default:
		return gp.NewSOLVEGP(k, lik, z, o, opts...)
	}
}

// prior returns the kernel and the inducing inputs Z and O (nil when the
// spec has no orthogonal inducing points) placed on the standardized
// training inputs x by k-means or, with -init greedy, by greedy
// conditional-variance selection under the initial kernel.
func (s *modelSpec) prior(x *mat.Dense) (k kernel.Kernel, z, o *mat.Dense, err error) {
	n, d := x.Dims()
	if n < s.m+s.m2 {
		return nil, nil, nil, fmt.Errorf("%d training rows, fewer than the %d inducing points asked for (-m %d, -m2 %d)", n, s.m+s.m2, s.m, s.m2)
	}
	if k, err = s.newKernel(d); err != nil {
		return nil, nil, nil, err
	}
	if s.init == "greedy" {
		opts := inducing.GreedyOptions{Subsample: 100 * (s.m + s.m2), Seed: s.seed, Threads: s.threads}
		z, o, err = inducing.GreedyInit(k, x, s.m, s.m2, opts)
	} else {
		z, o, err = inducing.Init(x, s.m, s.m2, inducing.KMeansOptions{Seed: s.seed, Threads: s.threads})
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if s.m2 == 0 {
		o = nil
	}
	return k, z, o, nil
}
