package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math/rand/v2"
	"sort"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"

	"github.com/solvegp/solvegp/internal/figure"
)

// paperCounts are the forward-pass operation counts of Table 3 of the
// paper for one latent function, per class (matmul, Cholesky, triangular
// solve).
var paperCounts = map[gp.Kind][3]int{
	gp.SVGP:    {1, 1, 3},
	gp.SOLVEGP: {4, 2, 7},
}

var opClasses = []gp.OpClass{gp.MatMul, gp.Cholesky, gp.TriSolve}

// benchClass is the cost of one class of operations in one pass.
type benchClass struct {
	Class        string   `json:"class"`
	Pass         string   `json:"pass"`
	Count        int      `json:"count"`
	PaperCount   *int     `json:"paper_count,omitempty"`
	GFlop        float64  `json:"gflop"`
	Milliseconds float64  `json:"ms"`
	Factor       *float64 `json:"factor_vs_single_MxM,omitempty"`
}

// benchModel is the cost of one model's bound and gradient.
type benchModel struct {
	Name      string       `json:"name"`
	M         int          `json:"m"`
	M2        int          `json:"m2"`
	StepMS    float64      `json:"step_ms"`
	BestMS    float64      `json:"best_step_ms"`
	CubicMS   float64      `json:"cubic_ms"`
	Classes   []benchClass `json:"classes"`
	kind      gp.Kind
	fwdFactor [3]float64
	fwdMS     [3]float64
	bwdMS     [3]float64
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bench", "[flags]",
		`Measures the cubic-cost operations of one evaluation of the bound and its
gradient — matrix products, Cholesky factorizations and triangular solves, the
rows of the paper's Table 3 — for SVGP with M and with M + M2 inducing points and
SOLVE-GP with M + M2, on a random mini-batch of N points. For each model and
class it prints the number of operations (next to Table 3's count for the
forward pass), their flops, the measured time (median step of -reps), and the
factor of increase over a single M×M operation of that class, which is what
the paper's Figure 7 plots. -png writes that figure.`, stderr)
	m := fs.Int("m", 1024, "inducing points M")
	m2 := fs.Int("m2", 1024, "orthogonal inducing points M2")
	n := fs.Int("n", 1024, "mini-batch size N")
	d := fs.Int("d", 8, "input dimension")
	reps := fs.Int("reps", 5, "timed evaluations per model (the median is reported)")
	odvgp := fs.Bool("odvgp", false, "also measure ODVGP with M + M2")
	whiten := fs.Bool("whiten", false, "use the whitened parameterization")
	threads := fs.Int("threads", 0, "goroutines per linear-algebra call (0: all CPUs)")
	seed := fs.Uint64("seed", 1, "random seed of the synthetic data")
	pngPath := fs.String("png", "", "write the cost figure (like the paper's Figure 7) to this PNG")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	if done, code := parse(fs, args); done {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "solvegp bench: unexpected argument %q (see solvegp bench -h)\n", fs.Arg(0))
		return exitUsage
	}
	switch {
	case *m < 1 || *m2 < 1 || *n < 1 || *d < 1:
		return fail(stderr, "bench", fmt.Errorf("-m %d, -m2 %d, -n %d, -d %d: all must be positive", *m, *m2, *n, *d))
	case *reps < 1:
		return fail(stderr, "bench", fmt.Errorf("-reps %d: must be positive", *reps))
	case *m+*m2 > 20000:
		return fail(stderr, "bench", fmt.Errorf("-m + -m2 = %d: more than 20000 needs > 3 GiB per matrix; refusing", *m+*m2))
	case *n > 1<<20 || *d > 1<<16:
		return fail(stderr, "bench", fmt.Errorf("-n %d, -d %d: at most 2^20 points of 2^16 inputs", *n, *d))
	case (*n+*m+*m2)*(*d) > 1<<28 || *n*(*m+*m2) > 1<<28:
		return fail(stderr, "bench", fmt.Errorf("-n %d, -d %d, -m + -m2 = %d: inputs or kernel matrices of more than 2^28 values (2 GiB); refusing", *n, *d, *m+*m2))
	}
	if err := writableDir(namedFile{what: "-png", path: *pngPath}); err != nil {
		return fail(stderr, "bench", err)
	}
	rng := rand.New(rand.NewPCG(*seed, 7))
	randm := func(r int) *mat.Dense {
		a := mat.NewDense(r, *d, nil)
		for i := range a.RawMatrix().Data {
			a.RawMatrix().Data[i] = rng.NormFloat64()
		}
		return a
	}
	x := randm(*n)
	y := make([]float64, *n)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	z, zBig, o := randm(*m), randm(*m+*m2), randm(*m2)
	specs := []benchModel{
		{Name: "SVGP (M)", M: *m, kind: gp.SVGP},
		{Name: "SVGP (M+M2)", M: *m + *m2, kind: gp.SVGP},
		{Name: "SOLVE-GP (M, M2)", M: *m, M2: *m2, kind: gp.SOLVEGP},
	}
	if *odvgp {
		specs = append(specs, benchModel{Name: "ODVGP (M, M2)", M: *m, M2: *m2, kind: gp.ODVGP})
	}
	for i := range specs {
		if err := ctx.Err(); err != nil {
			fmt.Fprintln(stderr, "solvegp bench: interrupted")
			return exitInterrupted
		}
		if err := measureModel(&specs[i], benchInputs{x: x, y: y, z: z, zBig: zBig, o: o}, *m, *reps, benchOptions(*whiten, *threads)); err != nil {
			return fail(stderr, "bench", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err := enc.Encode(struct {
			M        int          `json:"m"`
			M2       int          `json:"m2"`
			N        int          `json:"n"`
			D        int          `json:"d"`
			Reps     int          `json:"reps"`
			Seed     uint64       `json:"seed"`
			Threads  int          `json:"threads"`
			Whitened bool         `json:"whitened"`
			Models   []benchModel `json:"models"`
		}{*m, *m2, *n, *d, *reps, *seed, *threads, *whiten, specs})
		if err != nil {
			return fail(stderr, "bench", err)
		}
	} else {
		printBenchTable(stdout, specs, fmt.Sprintf("M = %d, M2 = %d, N = %d, d = %d, whitened %v (median of %d)", *m, *m2, *n, *d, *whiten, *reps))
	}
	if *pngPath != "" {
		if err := plotCost(*pngPath, specs, *m, *m2, *n); err != nil {
			return fail(stderr, "bench", err)
		}
		if !*asJSON {
			fmt.Fprintf(stdout, "\nCost figure written to %s\n", *pngPath)
		}
	}
	return exitOK
}

// benchInputs are the synthetic data of bench: a mini-batch x, y and the
// inducing inputs Z (M rows), zBig (M + M2 rows) and O (M2 rows).
type benchInputs struct {
	x          *mat.Dense
	y          []float64
	z, zBig, o *mat.Dense
}

// benchOptions are the model options of bench.
func benchOptions(whiten bool, threads int) []gp.Option {
	return []gp.Option{gp.WithWhitening(whiten), gp.WithThreads(threads)}
}

// measureModel builds bm's model on in (m: the size of Z), times reps
// evaluations of the bound and its gradient after a warm-up, and fills bm
// with the median step's costs per class.
func measureModel(bm *benchModel, in benchInputs, m, reps int, opts []gp.Option) error {
	_, d := in.x.Dims()
	n := len(in.y)
	k, _ := kernel.NewMatern32(d, float64(d), 1)
	lik, _ := likelihood.NewGaussian(0.1)
	var model *gp.Model
	var err error
	switch {
	case bm.kind == gp.SVGP && bm.M == m:
		model, err = gp.NewSVGP(k, lik, in.z, opts...)
	case bm.kind == gp.SVGP:
		model, err = gp.NewSVGP(k, lik, in.zBig, opts...)
	case bm.kind == gp.SOLVEGP:
		model, err = gp.NewSOLVEGP(k, lik, in.z, in.o, opts...)
	default:
		model, err = gp.NewODVGP(k, lik, in.z, in.o, opts...)
	}
	if err != nil {
		return err
	}
	grad := make([]float64, model.NumParams())
	if _, err := model.Objective(in.x, in.y, n, grad); err != nil { // warm-up
		return err
	}
	type rep struct {
		d    time.Duration
		prof gp.CostProfile
	}
	var rs []rep
	for r := 0; r < reps; r++ {
		start := time.Now()
		if _, err := model.Objective(in.x, in.y, n, grad); err != nil {
			return err
		}
		rs = append(rs, rep{time.Since(start), model.LastProfile()})
	}
	sort.Slice(rs, func(a, b int) bool { return rs[a].d < rs[b].d })
	med := rs[len(rs)/2]
	bm.StepMS, bm.BestMS = ms(med.d), ms(rs[0].d)
	mm := float64(m)
	// One operation of a class on M×M matrices, the unit of the paper's
	// Figure 7: each operation counts as its size m·n·k (Op.Dims) over M³,
	// so that a triangular product, a general one and a Cholesky
	// factorization of order M each count 1, whatever their flops.
	bm.addClasses(med.prof, mm*mm*mm)
	return nil
}

// addClasses fills bm's per-class rows, forward then backward, from the
// profile of one evaluation; unit is the size of one M×M operation.
func (bm *benchModel) addClasses(prof gp.CostProfile, unit float64) {
	for _, pass := range []gp.Pass{gp.Forward, gp.Backward} {
		for ci, c := range opClasses {
			bc := benchClass{Class: c.String(), Pass: pass.String(), Count: prof.Count(c, pass), Milliseconds: ms(prof.Time(c, pass))}
			var fl, size float64
			for _, op := range prof.Ops {
				if op.Class == c && op.Pass == pass {
					fl += op.Flops
					size += float64(op.Dims[0]) * float64(op.Dims[1]) * float64(op.Dims[2])
				}
			}
			bc.GFlop = fl / 1e9
			bm.CubicMS += bc.Milliseconds
			if pass == gp.Forward {
				if pc, ok := paperCounts[bm.kind]; ok {
					v := pc[ci]
					bc.PaperCount = &v
				}
				f := size / unit
				bc.Factor = &f
				bm.fwdFactor[ci] = f
				bm.fwdMS[ci] = bc.Milliseconds
			} else {
				bm.bwdMS[ci] = bc.Milliseconds
			}
			bm.Classes = append(bm.Classes, bc)
		}
	}
}

// printBenchTable prints bench's results as Markdown tables; setup
// describes the run.
func printBenchTable(w io.Writer, specs []benchModel, setup string) {
	fmt.Fprintf(w, "Cubic-cost operations per bound+gradient evaluation: %s\n\n", setup)
	fmt.Fprintf(w, "| model | class | Table 3 count (fwd) | count fwd | count bwd | GFlop fwd | GFlop bwd | ms fwd | ms bwd | factor vs one M×M op (fwd) |\n")
	fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, bm := range specs {
		for ci := range opClasses {
			f, b := bm.Classes[ci], bm.Classes[ci+3]
			paper := "–"
			if f.PaperCount != nil {
				paper = fmt.Sprint(*f.PaperCount)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %.3f | %.3f | %.2f | %.2f | %.2f |\n",
				bm.Name, f.Class, paper, f.Count, b.Count, f.GFlop, b.GFlop, f.Milliseconds, b.Milliseconds, *f.Factor)
		}
	}
	fmt.Fprintf(w, "\n| model | step ms (median) | step ms (best) | of which cubic ops ms |\n|---|---:|---:|---:|\n")
	for _, bm := range specs {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f |\n", bm.Name, bm.StepMS, bm.BestMS, bm.CubicMS)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// plotCost draws the paper's Figure 7 (factor of increase over one M×M
// operation, per class and model, from the flop counts of the forward
// pass) next to the measured times (forward plus backward).
func plotCost(path string, models []benchModel, m, m2, n int) error {
	names := []string{"matmul", "Cholesky", "tri. solve"}
	mk := func(title, ylabel string, val func(bm *benchModel, ci int) float64) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.Y.Label.Text = ylabel
		w := vg.Points(20)
		top := 0.0
		colours := []color.Color{figure.ColourMean, colourValid, figure.ColourSOLVE, figure.ColourZ}
		for i := range models {
			vals := make(plotter.Values, len(opClasses))
			for ci := range opClasses {
				vals[ci] = val(&models[i], ci)
				top = max(top, vals[ci])
			}
			bars, err := plotter.NewBarChart(vals, w)
			if err != nil {
				return nil, err
			}
			bars.Color = colours[i%len(colours)]
			bars.LineStyle.Width = 0
			bars.Offset = vg.Length(float64(i)-float64(len(models)-1)/2) * w
			p.Add(bars)
			p.Legend.Add(models[i].Name, bars)
		}
		p.Legend.Top = true
		p.Legend.Left = true
		p.Y.Min, p.Y.Max = 0, 1.45*top // room for the legend
		p.NominalX(names...)
		return p, nil
	}
	a, err := mk(fmt.Sprintf("cost vs one M×M op (flops; M=%d, M2=%d, N=%d)", m, m2, n), "factor", func(bm *benchModel, ci int) float64 { return bm.fwdFactor[ci] })
	if err != nil {
		return err
	}
	b, err := mk("measured time, forward + backward", "milliseconds", func(bm *benchModel, ci int) float64 { return bm.fwdMS[ci] + bm.bwdMS[ci] })
	if err != nil {
		return err
	}
	if len(models) == 0 {
		return errors.New("no model measured")
	}
	return figure.SavePNG(path, [][]*plot.Plot{{a, b}}, 11*vg.Inch, 4.5*vg.Inch)
}
