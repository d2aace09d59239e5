package convgp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/mean"
	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/floats"
	"github.com/solvegp/solvegp/internal/parallel"
	"github.com/solvegp/solvegp/internal/randstate"
	"github.com/solvegp/solvegp/patches"
)

// Hidden describes a hidden layer of a deep convolutional GP: Channels
// independent patch-response GPs g_c (sharing an RBF kernel and inducing
// patches) map every patch x[p] of the layer's input feature map to the
// output feature map h[p, c] = g_c(x[p]).
type Hidden struct {
	PatchHeight, PatchWidth int
	Stride                  int // 0 means 1
	Channels                int // output channels (≥ 2)
	M, M2                   int // inducing and orthogonal inducing patches (M2 = 0 for SVGP)
	// Lengthscale initializes this layer's patch-kernel lengthscale
	// (0: DeepConfig.Lengthscale).
	Lengthscale float64
}

// Output describes the output layer: a convolutional (or TICK) GP with one
// latent function per class on the last feature map.
type Output struct {
	PatchHeight, PatchWidth int
	Stride                  int // 0 means 1
	M, M2                   int
	TICK                    bool
	// Lengthscale initializes the patch-kernel lengthscale (0:
	// DeepConfig.Lengthscale). Patches of many channels are far apart in
	// Euclidean distance, so a deep model's output layer may need a larger
	// value than the input layer to start with non-vanishing covariances.
	Lengthscale float64
}

// DeepConfig describes a (deep) convolutional GP classifier. With no hidden
// layers it is the single-layer convolutional GP.
type DeepConfig struct {
	Height, Width, Channels int // input images (NHWC, one row per image)
	Classes                 int // ≥ 2; RobustMax likelihood

	Hidden []Hidden
	Output Output

	// Kind is gp.SVGP or gp.SOLVEGP for every layer (M2 > 0 is required
	// for SOLVE-GP and ignored for SVGP).
	Kind gp.Kind
	// Whiten selects the whitened parameterization in every layer (the
	// paper whitens single-layer models only).
	Whiten bool

	// Variance and Lengthscale initialize every patch kernel (paper: 5, 5)
	// unless a layer sets its own Lengthscale; LocLengthscale the TICK
	// location kernel (paper: 3). Zero means the paper's value. Every
	// lengthscale, a layer's own included, must be at least
	// kernel.MinLengthscale.
	Variance, Lengthscale, LocLengthscale float64

	// Epsilon is the RobustMax error rate ε in (0, 1); zero means
	// likelihood.DefaultEpsilon.
	Epsilon float64

	// LinearMean gives every hidden layer a learnable linear mean
	// function, h[p] = Wᵀx[p] + g(x[p]) with W (PatchLen × Channels)
	// initialized to the random Glorot-uniform filters whose projections
	// initialize the next layer's inducing patches (Salimbeni & Deisenroth
	// 2017 use a linear mean in hidden layers so that a deep GP starts
	// close to a deterministic map of its inputs). Without it hidden layers
	// have zero mean, as in the paper.
	LinearMean bool
	// OutputMean is the output layer's prior mean, one per class, learned
	// with the other parameters and starting at 0: "" (none, as in the
	// paper), "constant" (a constant per class, the classes' prior
	// log-odds, which helps with unbalanced classes) or "linear" (per class
	// a linear function of the output layer's input: the pixels for a
	// single-layer model, a linear classifier added to the GP). Model files
	// with one need version 2 (outputMeanVersion).
	OutputMean string `json:",omitempty"`
	// HiddenVariance initializes the hidden layers' patch-kernel variance
	// (zero: Variance).
	HiddenVariance float64
	// HiddenInitVar, if positive, starts the hidden layers' q(u) (and
	// q(v⊥)) with covariance HiddenInitVar·I and zero mean instead of the
	// prior (Salimbeni & Deisenroth 2017: 1e-5), so that the sampled
	// feature maps start with little noise.
	HiddenInitVar float64

	// Init controls the k-means initialization of the inducing patches.
	Init InitOptions
	// Seed seeds the Monte Carlo samples propagated through the layers.
	Seed uint64
	// Threads bounds the goroutines of each layer's linear algebra and
	// kernels (0: GOMAXPROCS).
	Threads int
	// CacheBytes is the output layer's Config.CacheBytes (≤ 0, the
	// default: no cache).
	CacheBytes int
}

type hiddenLayer struct {
	geom  *patches.Geometry
	model *gp.Model
	c     int
	// w (PatchLen × c, row-major) is the linear mean function's matrix
	// (nil without one); its parameters follow the model's in the flat
	// vector.
	w []float64
	// per-evaluation buffers
	cols           *mat.Dense
	mu, vr, eps, f []float64
	dmu, dvr       []float64 // gradients on the sampled marginals
	dcols          *mat.Dense
	dmap           *mat.Dense // gradient on the layer's input feature maps
	smp            sampler    // the random streams of the sampling
}

// Deep is a deep convolutional GP classifier trained by doubly stochastic
// variational inference (Salimbeni & Deisenroth 2017): one sample of every
// hidden feature map is propagated through the layers per evaluation,
// sampling each patch response from its marginal (correlations between
// patches are ignored, as in the paper). It implements train.Model: its flat
// parameter vector is the concatenation of the layers' vectors, input layer
// first and the output layer last.
type Deep struct {
	cfg    DeepConfig
	hidden []*hiddenLayer
	out    *gp.Model
	kern   *Kernel
	lik    *likelihood.RobustMax
	offs   []int // start of each layer's parameters; len(hidden)+2
	rng    *rand.Rand
	src    *rand.PCG // rng's source, whose state RandomState returns
	outIn  int       // length of the output layer's input rows
	dh     *mat.Dense
	mu, vr []float64
	dmu    []float64
	dvr    []float64
}

// NewDeep builds a deep convolutional GP for cfg and initializes its
// inducing patches from the images x (n × Height·Width·Channels): the input
// layer's by k-means on patches of x, deeper layers' on patches of the
// projections of x through random Glorot-uniform filters (see InitInducing).
// TICK locations are drawn uniformly over the output grid. Variational
// distributions start at their priors. A configuration of more than
// MaxModelParams parameters (the most a model file may hold) is refused,
// as are sizes whose product overflows int, with an error wrapping
// ErrConfig.
func NewDeep(x *mat.Dense, cfg DeepConfig) (*Deep, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: no images for initialization", ErrConfig)
	}
	return newDeep(x, cfg)
}

// newDeep is NewDeep; with x nil it skips the initialization from data and
// gives every layer zero inducing points, for a caller that sets all the
// parameters next (ReadModel).
func newDeep(x *mat.Dense, cfg DeepConfig) (*Deep, error) {
	cfg, err := checkDeepConfig(x, cfg)
	if err != nil {
		return nil, err
	}
	src := rand.NewPCG(cfg.Seed, cfg.Seed^0xda942042e4dd58b5)
	d := &Deep{cfg: cfg, rng: rand.New(src), src: src}
	b := &deepBuilder{cfg: cfg,
		opts: []gp.Option{gp.WithWhitening(cfg.Whiten), gp.WithThreads(cfg.Threads), gp.WithSeed(cfg.Seed + 11)},
		grng: rand.New(rand.NewPCG(cfg.Init.Seed^0x3c6ef372fe94f82b, 17)),
		h:    cfg.Height, w: cfg.Width, c: cfg.Channels, proj: x}
	for i, hs := range cfg.Hidden {
		hl, err := b.hiddenLayer(i, hs)
		if err != nil {
			return nil, err
		}
		d.hidden = append(d.hidden, hl)
	}
	if d.kern, d.lik, d.out, err = b.outputLayer(); err != nil {
		return nil, err
	}
	d.outIn = b.h * b.w * b.c
	off := 0
	for _, h := range d.hidden {
		d.offs = append(d.offs, off)
		off += h.model.NumParams() + len(h.w)
	}
	d.offs = append(d.offs, off, off+d.out.NumParams())
	return d, nil
}

// checkDeepConfig returns cfg with its defaults filled in and its Hidden
// slice copied, or an error wrapping ErrConfig if cfg, or the width of the
// images x (if not nil), is invalid.
func checkDeepConfig(x *mat.Dense, cfg DeepConfig) (DeepConfig, error) {
	if cfg.Height < 1 || cfg.Width < 1 || cfg.Channels < 1 || cfg.Classes < 2 {
		return cfg, fmt.Errorf("%w: images %d×%d×%d, %d classes", ErrConfig, cfg.Height, cfg.Width, cfg.Channels, cfg.Classes)
	}
	if cfg.Kind != gp.SVGP && cfg.Kind != gp.SOLVEGP {
		return cfg, fmt.Errorf("%w: kind %v (want SVGP or SOLVE-GP)", ErrConfig, cfg.Kind)
	}
	if x != nil {
		if _, c := x.Dims(); c != cfg.Height*cfg.Width*cfg.Channels {
			return cfg, fmt.Errorf("%w: images have %d values, want %d", ErrConfig, c, cfg.Height*cfg.Width*cfg.Channels)
		}
	}
	// The sizes, before anything is allocated for them: absurd ones (more
	// parameters than a model file may hold) are errors, not a failed
	// allocation or an int overflow.
	if _, err := countParams(cfg, ErrConfig); err != nil {
		return cfg, err
	}
	if cfg.Variance == 0 {
		cfg.Variance = 5
	}
	if cfg.Lengthscale == 0 {
		cfg.Lengthscale = 5
	}
	if cfg.LocLengthscale == 0 {
		cfg.LocLengthscale = 3
	}
	if cfg.HiddenVariance == 0 {
		cfg.HiddenVariance = cfg.Variance
	}
	if cfg.Epsilon == 0 {
		cfg.Epsilon = likelihood.DefaultEpsilon // pinned, so that a saved model keeps it
	}
	cfg.Hidden = slices.Clone(cfg.Hidden) // the caller's slice may change later
	for _, v := range []float64{cfg.Variance, cfg.Lengthscale, cfg.LocLengthscale, cfg.HiddenVariance} {
		if !(v > 0) || math.IsInf(v, 0) {
			return cfg, fmt.Errorf("%w: kernel parameter %v", ErrConfig, v)
		}
	}
	// Every lengthscale, a layer's own (0: the model's) included, is at
	// least gp/kernel's floor, as the kernels require.
	lsOK := func(ls float64) bool { return ls >= kernel.MinLengthscale && !math.IsInf(ls, 0) }
	if !lsOK(cfg.Lengthscale) || !lsOK(cfg.LocLengthscale) {
		return cfg, fmt.Errorf("%w: lengthscales %v, %v (location): must be at least %g", ErrConfig, cfg.Lengthscale, cfg.LocLengthscale, kernel.MinLengthscale)
	}
	for i, hs := range cfg.Hidden {
		if hs.Lengthscale != 0 && !lsOK(hs.Lengthscale) {
			return cfg, fmt.Errorf("%w: hidden layer %d: lengthscale %v (0, or finite and at least %g)", ErrConfig, i, hs.Lengthscale, kernel.MinLengthscale)
		}
	}
	if ls := cfg.Output.Lengthscale; ls != 0 && !lsOK(ls) {
		return cfg, fmt.Errorf("%w: output layer: lengthscale %v (0, or finite and at least %g)", ErrConfig, ls, kernel.MinLengthscale)
	}
	if !(cfg.HiddenInitVar >= 0) || math.IsInf(cfg.HiddenInitVar, 0) {
		return cfg, fmt.Errorf("%w: hidden initial variance %v", ErrConfig, cfg.HiddenInitVar)
	}
	return cfg, nil
}

// deepBuilder builds the layers of a Deep from the input up.
type deepBuilder struct {
	cfg  DeepConfig  // checked, with defaults
	opts []gp.Option // of every layer's model
	// grng draws the Glorot filters and projections of the
	// initialization, layer after layer.
	grng *rand.Rand
	// h, w and c are the height, width and channels of the next layer's
	// input; proj holds the images projected to it (nil: no
	// initialization from data).
	h, w, c int
	proj    *mat.Dense
}

// m2of returns m2 for SOLVE-GP and 0 for SVGP.
func (b *deepBuilder) m2of(m2 int) int {
	if b.cfg.Kind == gp.SVGP {
		return 0
	}
	return m2
}

// hiddenLayer builds hidden layer i and moves the builder to its output.
func (b *deepBuilder) hiddenLayer(i int, hs Hidden) (*hiddenLayer, error) {
	cfg := b.cfg
	if why := sizeProblem(cfg.Kind, hs.M, b.m2of(hs.M2), hs.Channels); hs.Channels < 2 || why != "" {
		if why == "" {
			why = "a hidden layer needs at least 2 channels"
		}
		return nil, fmt.Errorf("%w: hidden layer %d: %d channels, M = %d, M2 = %d: %s", ErrConfig, i, hs.Channels, hs.M, hs.M2, why)
	}
	g, err := patches.New(patches.Config{Height: b.h, Width: b.w, Channels: b.c, PatchHeight: hs.PatchHeight,
		PatchWidth: hs.PatchWidth, StrideH: hs.Stride, StrideW: hs.Stride, Workers: cfg.Threads})
	if err != nil {
		return nil, fmt.Errorf("convgp: hidden layer %d: %w", i, err)
	}
	pk, err := kernel.NewRBF(g.PatchLen(), layerLengthscale(hs.Lengthscale, cfg.Lengthscale), cfg.HiddenVariance)
	if err != nil {
		return nil, fmt.Errorf("%w: hidden layer %d: %w", ErrConfig, i, err)
	}
	var z, o *mat.Dense
	if b.proj == nil {
		z, o = zeroInducing(hs.M, b.m2of(hs.M2), g.PatchLen())
	} else if z, o, err = initPatches(b.proj, g, hs.M, b.m2of(hs.M2), cfg.Init); err != nil {
		return nil, fmt.Errorf("convgp: hidden layer %d: %w", i, err)
	}
	carrier, err := likelihood.NewSoftmax(hs.Channels)
	if err != nil {
		return nil, fmt.Errorf("%w: hidden layer %d: %w", ErrConfig, i, err)
	}
	var mod *gp.Model
	if cfg.Kind == gp.SVGP {
		mod, err = gp.NewSVGP(pk, carrier, z, b.opts...)
	} else {
		mod, err = gp.NewSOLVEGP(pk, carrier, z, o, b.opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("convgp: hidden layer %d: %w", i, err)
	}
	if cfg.HiddenInitVar > 0 {
		if err := setInitialCov(mod, cfg.HiddenInitVar); err != nil {
			return nil, fmt.Errorf("convgp: hidden layer %d: %w", i, err)
		}
	}
	hl := &hiddenLayer{geom: g, model: mod, c: hs.Channels}
	var w []float64 // the Glorot filters, for initialization from x
	if b.proj != nil {
		w = glorotFilters(g, hs.Channels, b.grng)
	}
	if cfg.LinearMean {
		hl.w = make([]float64, g.PatchLen()*hs.Channels) // zero: set with the parameters
		copy(hl.w, w)
	}
	if b.proj != nil {
		if b.proj, err = glorotProject(b.proj, g, w, hs.Channels, b.grng, cfg.Init); err != nil {
			return nil, err
		}
	}
	b.h, b.w, b.c = g.OutHeight(), g.OutWidth(), hs.Channels
	return hl, nil
}

// outputLayer builds the output layer: its convolutional kernel, the
// robust-max likelihood and the model.
func (b *deepBuilder) outputLayer() (*Kernel, *likelihood.RobustMax, *gp.Model, error) {
	cfg := b.cfg
	out := cfg.Output
	if why := sizeProblem(cfg.Kind, out.M, b.m2of(out.M2), cfg.Classes); why != "" {
		return nil, nil, nil, fmt.Errorf("%w: output layer: M = %d, M2 = %d, %d classes: %s", ErrConfig, out.M, out.M2, cfg.Classes, why)
	}
	k, err := New(Config{Patches: patches.Config{Height: b.h, Width: b.w, Channels: b.c, PatchHeight: out.PatchHeight,
		PatchWidth: out.PatchWidth, StrideH: out.Stride, StrideW: out.Stride},
		Variance: cfg.Variance, Lengthscale: layerLengthscale(out.Lengthscale, cfg.Lengthscale), TICK: out.TICK, LocLengthscale: cfg.LocLengthscale,
		Workers: cfg.Threads, CacheBytes: cfg.CacheBytes})
	if err != nil {
		return nil, nil, nil, err
	}
	var z, o *mat.Dense
	if b.proj == nil {
		z, o = zeroInducing(out.M, b.m2of(out.M2), k.InducingDim())
	} else if z, o, err = InitInducing(b.proj, k, out.M, b.m2of(out.M2), cfg.Init); err != nil {
		return nil, nil, nil, err
	}
	lik, err := likelihood.NewRobustMax(cfg.Classes, likelihood.Epsilon(cfg.Epsilon))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	opts := b.opts
	if cfg.OutputMean != "" {
		m, err := outputMean(cfg.OutputMean, k.Dim(), cfg.Classes)
		if err != nil {
			return nil, nil, nil, err
		}
		opts = append(slices.Clip(opts), gp.WithMean(m))
	}
	var mod *gp.Model
	if cfg.Kind == gp.SVGP {
		mod, err = gp.NewSVGP(k, lik, z, opts...)
	} else {
		mod, err = gp.NewSOLVEGP(k, lik, z, o, opts...)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("convgp: output layer: %w", err)
	}
	return k, lik, mod, nil
}

// outputMean returns the output layer's mean of type kind ("constant" or
// "linear"), one per class on d-dimensional inputs, every parameter 0.
func outputMean(kind string, d, classes int) (gp.MeanFunction, error) {
	switch kind {
	case "constant":
		return mean.NewConstantPerLatent(d, make([]float64, classes))
	case "linear":
		w := make([][]float64, classes)
		for l := range w {
			w[l] = make([]float64, d)
		}
		return mean.NewLinearPerLatent(w, make([]float64, classes))
	}
	return nil, fmt.Errorf("%w: output mean %q (want constant or linear)", ErrConfig, kind)
}

// sizeProblem returns what is wrong with a layer of kind k with m inducing
// and m2 orthogonal inducing points (0 for SVGP) and the given number of
// latent functions, or "" if nothing is.
func sizeProblem(k gp.Kind, m, m2, latent int) string {
	switch {
	case m < 1:
		return "M must be at least 1"
	case k == gp.SOLVEGP && m2 < 1:
		return "SOLVE-GP needs M2 ≥ 1 orthogonal inducing patches (a model without them is SVGP)"
	case latent < 1:
		return "no latent functions (classes, or channels of a hidden layer)"
	}
	return ""
}

// zeroInducing returns zero inducing points (m × dim) and orthogonal ones
// (m2 × dim, nil if m2 is 0), placeholders for parameters set afterwards.
func zeroInducing(m, m2, dim int) (z, o *mat.Dense) {
	z = mat.NewDense(m, dim, nil)
	if m2 > 0 {
		o = mat.NewDense(m2, dim, nil)
	}
	return z, o
}

// layerLengthscale returns a layer's initial lengthscale: its own if set,
// else the model's.
func layerLengthscale(own, model float64) float64 {
	if own > 0 {
		return own
	}
	return model
}

// initPatches runs k-means on patches of the images x for a plain patch
// kernel (no locations).
func initPatches(x *mat.Dense, g *patches.Geometry, m, m2 int, opts InitOptions) (z, o *mat.Dense, err error) {
	return initFromGeom(x, g, false, m, m2, opts)
}

// setInitialCov sets the variational covariances of every latent function
// of mod (q(u), and q(v⊥) for SOLVE-GP) to v·I.
func setInitialCov(mod *gp.Model, v float64) error {
	p := make([]float64, mod.NumParams())
	mod.Params(p)
	lay := mod.Layout()
	_, m, m2, _ := mod.Dims()
	diag := transform.InvSoftplus(math.Sqrt(v))
	set := func(off, n int) {
		for i := 0; i < n; i++ {
			row := p[off+i*(i+1)/2 : off+i*(i+1)/2+i+1]
			clear(row)
			row[i] = diag
		}
	}
	for l := range lay.LU {
		set(lay.LU[l], m)
		if lay.LV != nil && lay.LV[l] >= 0 {
			set(lay.LV[l], m2)
		}
	}
	return mod.SetParams(p)
}

// glorotFilters draws Glorot-uniform filters (PatchLen × c, row-major) for
// the patches of g.
func glorotFilters(g *patches.Geometry, c int, rng *rand.Rand) []float64 {
	dl := g.PatchLen()
	fanIn, fanOut := float64(dl), float64(dl/g.Config().Channels*c)
	lim := math.Sqrt(6 / (fanIn + fanOut))
	w := make([]float64, dl*c)
	for i := range w {
		w[i] = (2*rng.Float64() - 1) * lim
	}
	return w
}

// glorotProject convolves (at most opts.Images of) the images x with the
// filters w (PatchLen × c) to get the next layer's initialization inputs.
func glorotProject(x *mat.Dense, g *patches.Geometry, w []float64, c int, rng *rand.Rand, opts InitOptions) (*mat.Dense, error) {
	n, _ := x.Dims()
	ni := opts.Images
	if ni <= 0 {
		ni = 1000
	}
	ni = min(ni, n)
	idx := rng.Perm(n)[:ni]
	P, dl := g.NumPatches(), g.PatchLen()
	out := mat.NewDense(ni, P*c, nil)
	cols := make([]float64, P*dl)
	L := g.ImageLen()
	for i, r := range idx {
		if err := g.Im2Col(cols, x.RawRowView(r)[:L], 1); err != nil {
			return nil, err
		}
		gemm(false, false, P, c, dl, 1, cols, dl, w, c, 0, out.RawRowView(i), c)
	}
	return out, nil
}

// NumLayers returns the number of layers (hidden layers + 1), which Layer
// indexes.
func (d *Deep) NumLayers() int { return len(d.hidden) + 1 }

// SetThreads changes the goroutine budget of every layer (the linear
// algebra, the kernels, the sampling and im2col of hidden layers) as
// DeepConfig.Threads sets it at construction: for instance for a model from
// LoadModel, which keeps the budget it was saved with. t ≤ 0 means
// GOMAXPROCS. Results with another budget may differ in rounding. It must
// not be called during an evaluation.
func (d *Deep) SetThreads(t int) error {
	t = max(t, 0)
	geoms := make([]*patches.Geometry, len(d.hidden))
	for i, l := range d.hidden {
		c := l.geom.Config()
		c.Workers = t
		g, err := patches.New(c)
		if err != nil {
			return fmt.Errorf("convgp: hidden layer %d: %w", i, err)
		}
		geoms[i] = g
	}
	for i, l := range d.hidden {
		l.geom = geoms[i]
		l.model.SetThreads(t)
	}
	d.out.SetThreads(t) // and the output kernel's workers
	d.cfg.Threads = t
	return nil
}

// Config returns the model's configuration, with the defaults NewDeep
// applied (kernel variance and lengthscales, the robust-max ε): for a model
// from LoadModel, the image size and classes it expects.
func (d *Deep) Config() DeepConfig {
	c := d.cfg
	c.Hidden = slices.Clone(c.Hidden)
	return c
}

// Output returns the output layer's model and its convolutional kernel.
func (d *Deep) Output() (*gp.Model, *Kernel) { return d.out, d.kern }

// Layer returns the gp model of layer i, 0 ≤ i < NumLayers(), in the order
// of the parameter vector: the hidden layers from the input's, then the
// output layer (Layer(NumLayers()-1) is Output's model). An i out of that
// range panics, as a slice index does, with a message naming it.
func (d *Deep) Layer(i int) *gp.Model {
	switch {
	case i >= 0 && i < len(d.hidden):
		return d.hidden[i].model
	case i == len(d.hidden):
		return d.out
	}
	panic(fmt.Sprintf("convgp: Layer(%d) of a model of %d layers (0 … %d)", i, d.NumLayers(), d.NumLayers()-1))
}

// NumParams returns the length of the flat parameter vector.
func (d *Deep) NumParams() int { return d.offs[len(d.offs)-1] }

// Params copies all layers' parameters into dst (len NumParams; it panics
// if dst is shorter).
func (d *Deep) Params(dst []float64) {
	for i, h := range d.hidden {
		np := h.model.NumParams()
		h.model.Params(dst[d.offs[i] : d.offs[i]+np])
		copy(dst[d.offs[i]+np:d.offs[i+1]], h.w)
	}
	n := len(d.hidden)
	d.out.Params(dst[d.offs[n]:d.offs[n+1]])
}

// SetParams sets all layers' parameters; on error the model is unchanged.
func (d *Deep) SetParams(src []float64) error {
	if len(src) != d.NumParams() {
		return fmt.Errorf("%w: %d parameters, want %d", ErrConfig, len(src), d.NumParams())
	}
	nonFinite := func() error {
		i := floats.FirstNonFinite(src)
		return fmt.Errorf("%w: parameter %d is %v", ErrConfig, i, src[i])
	}
	// The layers' gp models check their own parts; the patch weights are
	// checked here, before anything changes.
	n := len(d.hidden)
	for i, h := range d.hidden {
		if !floats.AllFinite(src[d.offs[i]+h.model.NumParams() : d.offs[i+1]]) {
			return nonFinite()
		}
	}
	// The hidden layers' parameters, to restore if a later layer refuses
	// its own (the output layer's are never needed: it is set last).
	old := make([]float64, d.offs[n])
	for j, h := range d.hidden {
		h.model.Params(old[d.offs[j] : d.offs[j]+h.model.NumParams()])
	}
	for i := 0; i <= n; i++ {
		m := d.out
		end := d.offs[i+1]
		if i < n {
			m = d.hidden[i].model
			end = d.offs[i] + m.NumParams()
		}
		if err := m.SetParams(src[d.offs[i]:end]); err != nil {
			for j := 0; j < i; j++ {
				_ = d.hidden[j].model.SetParams(old[d.offs[j] : d.offs[j]+d.hidden[j].model.NumParams()])
			}
			if !floats.AllFinite(src[d.offs[i]:end]) {
				return nonFinite() // named by its index in the whole vector
			}
			return err
		}
	}
	for i, h := range d.hidden {
		copy(h.w, src[d.offs[i]+h.model.NumParams():d.offs[i+1]])
	}
	return nil
}

// propagate draws one sample of every hidden feature map for the images x
// and returns the output layer's input (n × outIn) and its KL terms.
func (d *Deep) propagate(x *mat.Dense, rng *rand.Rand) (*mat.Dense, float64, error) {
	n, _ := x.Dims()
	h := x
	kl := 0.0
	for i, l := range d.hidden {
		P, dl := l.geom.NumPatches(), l.geom.PatchLen()
		if r, _ := dimsOr(l.cols); r != n*P {
			l.cols = mat.NewDense(n*P, dl, nil)
		}
		hin := h.RawMatrix()
		var src []float64
		if hin.Stride == l.geom.ImageLen() {
			src = hin.Data[:n*hin.Stride]
		} else {
			src = mat.DenseCopyOf(h).RawMatrix().Data
		}
		if err := l.geom.Im2Col(l.cols.RawMatrix().Data, src, n); err != nil {
			return nil, 0, err
		}
		sz := n * P * l.c
		l.mu, l.vr, l.eps, l.f = growF(l.mu, sz), growF(l.vr, sz), growF(l.eps, sz), growF(l.f, sz)
		ku, kv, err := l.model.Forward(l.cols, l.mu, l.vr)
		if err != nil {
			return nil, 0, fmt.Errorf("convgp: layer %d: %w", i, err)
		}
		kl += ku + kv
		l.sample(rng.Uint64(), d.cfg.Threads)
		if l.w != nil {
			// Linear mean function: f += cols · W.
			gemm(false, false, n*P, l.c, dl, 1, l.cols.RawMatrix().Data, dl, l.w, l.c, 1, l.f, l.c)
		}
		h = mat.NewDense(n, P*l.c, l.f)
	}
	return h, kl, nil
}

func dimsOr(m *mat.Dense) (int, int) {
	if m == nil {
		return -1, -1
	}
	return m.Dims()
}

func growF(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// ValidateData checks a training set before training (train.Fit calls it
// once): x must hold one finite image per row (Height·Width·Channels
// values), y one class label in 0 … Classes−1 per image.
func (d *Deep) ValidateData(x *mat.Dense, y []float64) error {
	if x == nil {
		return fmt.Errorf("%w: nil images", ErrConfig)
	}
	n, c := x.Dims()
	if n < 1 || c != d.cfg.Height*d.cfg.Width*d.cfg.Channels || len(y) != n {
		return fmt.Errorf("%w: %d×%d images with %d labels, want n×%d and n labels", ErrConfig, n, c, len(y), d.cfg.Height*d.cfg.Width*d.cfg.Channels)
	}
	for i := 0; i < n; i++ {
		for _, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: image %d holds NaN or Inf", ErrConfig, i)
			}
		}
	}
	if err := d.lik.Validate(y); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// Objective returns the doubly stochastic ELBO estimate on the batch (x, y)
// of a data set of nTotal images, (nTotal/n)·Σ E[log p(y|f)] − Σ KL, from one
// sample of the hidden feature maps, and writes its gradient into grad.
func (d *Deep) Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error) {
	if x == nil {
		return 0, fmt.Errorf("%w: nil images", ErrConfig)
	}
	n, c := x.Dims()
	if n < 1 || c != d.cfg.Height*d.cfg.Width*d.cfg.Channels || len(y) != n {
		return 0, fmt.Errorf("%w: batch %d×%d with %d labels", ErrConfig, n, c, len(y))
	}
	if nTotal < 1 {
		return 0, fmt.Errorf("%w: nTotal = %d", ErrConfig, nTotal)
	}
	if grad != nil && len(grad) != d.NumParams() {
		return 0, fmt.Errorf("%w: gradient length %d, want %d", ErrConfig, len(grad), d.NumParams())
	}
	h, kl, err := d.propagate(x, d.rng)
	if err != nil {
		return 0, err
	}
	C := d.cfg.Classes
	d.mu, d.vr = growF(d.mu, n*C), growF(d.vr, n*C)
	ku, kv, err := d.out.Forward(h, d.mu, d.vr)
	if err != nil {
		return 0, fmt.Errorf("convgp: output layer: %w", err)
	}
	kl += ku + kv
	d.dmu, d.dvr = growF(d.dmu, n*C), growF(d.dvr, n*C)
	var dmu, dvr []float64
	if grad != nil {
		dmu, dvr = d.dmu, d.dvr
	}
	ell := d.lik.ExpectedLogLik(y, d.mu, d.vr, dmu, dvr, nil, d.rng)
	scale := float64(nTotal) / float64(n)
	obj := scale*ell - kl
	if math.IsNaN(obj) || math.IsInf(obj, 0) {
		return obj, errors.New("convgp: objective is not finite")
	}
	if grad == nil {
		return obj, nil
	}
	for i := range dmu {
		dmu[i] *= scale
		dvr[i] *= scale
	}
	clearPar(d.cfg.Threads, grad) // the layers' Backward calls add into it
	L := len(d.hidden)
	var dh *mat.Dense
	if L > 0 {
		if r, _ := dimsOr(d.dh); r != n {
			d.dh = mat.NewDense(n, d.outIn, nil)
		}
		dh = d.dh
		dh.Zero()
	}
	if err := d.out.Backward(dmu, dvr, -1, grad[d.offs[L]:d.offs[L+1]], dh); err != nil {
		return 0, err
	}
	for i := L - 1; i >= 0; i-- {
		l := d.hidden[i]
		sz := len(l.f)
		l.dmu, l.dvr = growF(l.dmu, sz), growF(l.dvr, sz)
		l.sampleGrad(dh.RawMatrix().Data[:sz], d.cfg.Threads)
		ldmu, ldvr := l.dmu, l.dvr
		var dcols *mat.Dense
		if i > 0 {
			r, cc := l.cols.Dims()
			if rr, _ := dimsOr(l.dcols); rr != r {
				l.dcols = mat.NewDense(r, cc, nil)
			}
			dcols = l.dcols
			dcols.Zero()
		}
		np := l.model.NumParams()
		if err := l.model.Backward(ldmu, ldvr, -1, grad[d.offs[i]:d.offs[i]+np], dcols); err != nil {
			return 0, fmt.Errorf("convgp: layer %d: %w", i, err)
		}
		if l.w != nil {
			// f = … + cols·W: dW = colsᵀ·dF, dcols += dF·Wᵀ.
			P, dl := l.geom.NumPatches(), l.geom.PatchLen()
			df := dh.RawMatrix().Data[:sz]
			cols := l.cols.RawMatrix().Data
			gemm(true, false, dl, l.c, n*P, 1, cols, dl, df, l.c, 1, grad[d.offs[i]+np:d.offs[i+1]], l.c)
			if dcols != nil {
				gemm(false, true, n*P, dl, l.c, 1, df, l.c, l.w, l.c, 1, dcols.RawMatrix().Data, dl)
			}
		}
		if i > 0 {
			prev := d.hidden[i-1]
			if r, _ := dimsOr(l.dmap); r != n {
				l.dmap = mat.NewDense(n, prev.geom.NumPatches()*prev.c, nil)
			}
			nd := l.dmap
			if err := l.geom.Col2Im(nd.RawMatrix().Data, dcols.RawMatrix().Data, n); err != nil {
				return 0, err
			}
			dh = nd
		}
	}
	return obj, nil
}

// DefaultPredictBatch is the batch size of Predict and Evaluate when they
// are given 0.
const DefaultPredictBatch = 256

// Predict returns the predictive class probabilities (n × Classes) of the
// images x, averaged over `samples` draws of the hidden feature maps (one
// draw suffices for a single-layer model, whose probabilities are exact up
// to the likelihood's quadrature), computed in batches of `batch` images.
// A samples or batch of 0 means the default, 1 sample and
// DefaultPredictBatch (256) images; a negative one is an error wrapping
// ErrConfig.
//
// The probabilities of a deep model (one with hidden layers) depend on the
// batch size as well as on samples: its hidden feature maps are sampled
// batch by batch, from a generator that every call restarts from
// DeepConfig.Seed, so that an image's draws depend on where its batch
// starts and how many images it holds. Predict(x, 3, 50) and
// Predict(x, 3, 20) are two Monte Carlo estimates of the same
// probabilities, which differ by their Monte Carlo error (less for more
// samples), as do the probabilities of an image predicted alone and
// within x.
//
// A call repeats exactly, to the bit, with the same model (parameters and
// seed), images in the same order, samples, batch and thread budget
// (SetThreads): to reproduce a number, such as bench/convgp's test
// log-likelihood (250 images a batch) or that of solvegp classify (its
// -batch, 250 by default), use the same samples and batch. A single-layer
// model draws nothing: its probabilities do not depend on samples, nor on
// batch beyond the rounding of the batched linear algebra.
func (d *Deep) Predict(x *mat.Dense, samples, batch int) (*mat.Dense, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil images", ErrConfig)
	}
	n, c := x.Dims()
	if n < 1 || c != d.cfg.Height*d.cfg.Width*d.cfg.Channels {
		return nil, fmt.Errorf("%w: images are %d×%d, want n×%d", ErrConfig, n, c, d.cfg.Height*d.cfg.Width*d.cfg.Channels)
	}
	if samples < 0 || batch < 0 {
		return nil, fmt.Errorf("%w: %d samples, batches of %d images: must be ≥ 1, or 0 for the default", ErrConfig, samples, batch)
	}
	if samples == 0 || len(d.hidden) == 0 {
		samples = 1
	}
	if batch == 0 {
		batch = DefaultPredictBatch
	}
	pred, err := d.out.Predictor(batch)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(d.cfg.Seed^0x1234567, 99))
	C := d.cfg.Classes
	probs := mat.NewDense(n, C, nil)
	for i0 := 0; i0 < n; i0 += batch {
		nb := min(batch, n-i0)
		xb := x.Slice(i0, i0+nb, 0, c).(*mat.Dense)
		for s := 0; s < samples; s++ {
			h := xb
			if len(d.hidden) > 0 {
				h, _, err = d.propagate(xb, rng)
				if err != nil {
					return nil, err
				}
			}
			pm, _, err := pred.PredictY(h)
			if err != nil {
				return nil, err
			}
			for j := 0; j < nb; j++ {
				row := probs.RawRowView(i0 + j)
				for k := range row {
					row[k] += pm.At(j, k) / float64(samples)
				}
			}
		}
	}
	return probs, nil
}

// Evaluate returns the classification accuracy and the mean log predictive
// density of the labels y (class indices 0 … Classes−1, as
// dataset.Images.FloatLabels gives them) of the images x under
// Predict(x, samples, batch)'s class probabilities (Score computes the
// metrics of probabilities and int labels). For a deep model they depend
// on batch as well as on samples, as Predict's probabilities do: a number
// is reproduced, to the bit, with the same model, images, samples and
// batch (bench/convgp evaluates with batch 250). A samples or batch of 0
// means Predict's default (1 sample, DefaultPredictBatch images); a
// negative one is an error wrapping ErrConfig.
func (d *Deep) Evaluate(x *mat.Dense, y []float64, samples, batch int) (acc, meanLL float64, err error) {
	if x == nil {
		return 0, 0, fmt.Errorf("%w: nil images", ErrConfig)
	}
	n, _ := x.Dims()
	if n != len(y) || n < 1 {
		return 0, 0, fmt.Errorf("%w: %d images, %d labels", ErrConfig, n, len(y))
	}
	C := d.cfg.Classes
	for _, v := range y {
		if v != math.Trunc(v) || v < 0 || v >= float64(C) {
			return 0, 0, fmt.Errorf("%w: label %v outside 0..%d", ErrConfig, v, C-1)
		}
	}
	probs, err := d.Predict(x, samples, batch)
	if err != nil {
		return 0, 0, err
	}
	labels := make([]int, n)
	for i, v := range y {
		labels[i] = int(v)
	}
	return Score(probs, labels)
}

// Score returns the accuracy of the most probable classes of probs (n ×
// classes, one row per image; of equal probabilities the first class) and
// the mean log probability of the labels (each probability floored at
// 1e-300), the metrics Evaluate reports for Predict's probabilities. It
// returns an error wrapping ErrConfig if probs has no rows, not one row per
// label, or a label is not one of its columns.
func Score(probs *mat.Dense, labels []int) (acc, meanLL float64, err error) {
	if probs == nil {
		return 0, 0, fmt.Errorf("%w: nil probabilities", ErrConfig)
	}
	n, c := probs.Dims()
	if n != len(labels) || n < 1 {
		return 0, 0, fmt.Errorf("%w: %d rows of probabilities, %d labels", ErrConfig, n, len(labels))
	}
	correct, sumLL := 0, 0.0
	for j, l := range labels {
		if l < 0 || l >= c {
			return 0, 0, fmt.Errorf("%w: label %d outside 0..%d", ErrConfig, l, c-1)
		}
		row := probs.RawRowView(j)
		best := 0
		for k := range row {
			if row[k] > row[best] {
				best = k
			}
		}
		if best == l {
			correct++
		}
		sumLL += math.Log(math.Max(row[l], 1e-300))
	}
	return float64(correct) / float64(n), sumLL / float64(n), nil
}

// RandomState returns the state of the generator behind the model's Monte
// Carlo draws (the sampled hidden feature maps; see DeepConfig.Seed). The
// layers' own gp models draw nothing: their kinds (SVGP, SOLVE-GP) sample
// no columns, and the likelihood is the Deep's. It implements
// train.RandomStater, so that train.Fit's checkpoints hold it and a resumed
// run draws the same samples as one never stopped.
func (d *Deep) RandomState() []byte { return randstate.Save(d.src) }

// SetRandomState restores a state returned by RandomState. A state that is
// not one is an error wrapping ErrConfig, and leaves the generator as it
// was.
func (d *Deep) SetRandomState(state []byte) error {
	if err := randstate.Restore(d.src, state); err != nil {
		return fmt.Errorf("%w: random state: %v", ErrConfig, err)
	}
	return nil
}

// clearParMin is the length below which clearPar clears on the calling
// goroutine.
const clearParMin = 1 << 16

// clearPar zeroes v in contiguous ranges on up to threads goroutines
// (≤ 0: GOMAXPROCS): a model's gradient holds tens of millions of values
// at the paper's sizes, too many to clear on one core while the other idles.
func clearPar(threads int, v []float64) {
	parts := parallel.Workers(threads, len(v)/clearParMin)
	if parts <= 1 {
		clear(v)
		return
	}
	parallel.Ranges(len(v), parts, func(_, lo, hi int) { clear(v[lo:hi]) })
}
