package modelfile

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// readerFixture is a model file for TestPythonReader.
type readerFixture struct {
	name string
	b    *Bundle
	// edit, if not nil, rewrites the saved file before both readers load
	// it (to test fields a reader must take as absent).
	edit func(t *testing.T, file []byte) []byte
	// header is the header line of the inputs file ("" for none).
	header string
	// swap writes the two input columns in reverse order (with a header
	// naming them, the reader matches them by name).
	swap bool
}

// TestPythonReader checks docs/model_reader.py, a reader written from
// docs/model-format.md alone, against Bundle.Predict on files of every
// model kind, whitened and not, several kernels and likelihoods (softmax
// excepted: its probabilities are Monte Carlo estimates), fields the writer
// omits, a negative zero in the parameters, and factorizations that need
// jitter: the pivot floor for K_uu and the K_vv-relative jitter for C_vv.
// Every prediction must agree to a relative 1e-8, and the jitters the
// reader adds (--jitter) must be Go's.
func TestPythonReader(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	reader, err := filepath.Abs(filepath.Join("..", "..", "docs", "model_reader.py"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(reader); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	var fixtures []readerFixture
	for i, c := range cases() {
		if c.name == "softmax" {
			continue
		}
		f := readerFixture{name: fmt.Sprintf("%v-%s-white=%v", c.kind, c.name, c.wh), b: &Bundle{Model: build(t, c, rng)}}
		if i%2 == 0 {
			// A standardizer (of the target too for the Gaussian) and input
			// names, matched by name in a header that swaps the columns.
			f.b.Standardizer = &data.Standardizer{XMean: []float64{0.5, -1}, XScale: []float64{2, 0.25}, YScale: 1}
			switch f.b.Model.Likelihood().(type) {
			case *likelihood.Gaussian, *likelihood.StudentT, *likelihood.Heteroscedastic:
				f.b.Standardizer.YMean, f.b.Standardizer.YScale = 7, 3
			}
			f.b.Meta.InputNames = []string{"a", "b"}
			f.header, f.swap = "b,a", true
		}
		fixtures = append(fixtures, f)
	}
	fixtures = append(fixtures, extraReaderFixtures(t, rng)...)
	fixtures = append(fixtures, meanReaderFixtures(t, rng)...)
	for name, b := range multiCases(t, rng) {
		fixtures = append(fixtures, readerFixture{name: name, b: b, header: "b,a", swap: true})
	}
	fixtures = append(fixtures, readerFixture{name: "separate", b: separateBundle(t, rng), header: "b,a", swap: true})

	dir := t.TempDir()
	// The inputs are drawn here, in fixture order, so that the subtests
	// (each mostly a Python process) can run in parallel.
	xs := make([]*mat.Dense, len(fixtures))
	for i := range xs {
		xs[i] = randMatrix(rng, 7, 2)
	}
	for i, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, f.name+".json")
			if err := Save(path, f.b); err != nil {
				t.Fatal(err)
			}
			if f.edit != nil {
				buf, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, f.edit(t, buf), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The Go predictions are those of the file as both readers see it.
			b, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			x := xs[i]
			want, err := b.Predict(x)
			if err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, f.name+".csv")
			if err := os.WriteFile(in, inputsCSV(x, f.header, f.swap), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(python, reader, "--jitter", path, in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", reader, err, stderr.String())
			}
			m := b.Model
			if b.Separate != nil {
				m = b.Separate.Output(0) // the reader reports output 0's jitters
			}
			_, hetero := m.Likelihood().(*likelihood.Heteroscedastic)
			comparePredictions(t, out, want, hetero, b.Meta.TargetNames)
			// The jitters of K_uu and C_vv, which the policy fixes up to
			// the rounding of its scale.
			pr, err := m.Predictor(0)
			if err != nil {
				t.Fatal(err)
			}
			ju, jv := pr.Jitter()
			var pu, pv float64
			if _, err := fmt.Sscanf(stderr.String(), "jitter %g %g", &pu, &pv); err != nil {
				t.Fatalf("reader's jitter report %q: %v", stderr.String(), err)
			}
			if math.Abs(pu-ju) > 1e-12*ju || math.Abs(pv-jv) > 1e-12*jv {
				t.Errorf("reader's jitters %g, %g; Go's %g, %g", pu, pv, ju, jv)
			}
		})
	}
}

// extraReaderFixtures returns the fixtures beyond cases(): omitted fields,
// a negative zero, and matrices that need jitter.
func extraReaderFixtures(t *testing.T, rng *rand.Rand) []readerFixture {
	t.Helper()
	var out []readerFixture

	// A Gaussian noise floor of 0, which the writer omits; and a negative
	// zero in the parameters, which the digest distinguishes from 0.
	m := build(t, modelCase{"floor0", gp.SVGP, false, func(d int) gp.Kernel { return must(kernel.NewMatern12(d, 0.8, 1.1)) },
		func() gp.Likelihood { return must(likelihood.NewGaussian(0.2, likelihood.NoiseFloor(0))) }, nil}, rng)
	p := make([]float64, m.NumParams())
	m.Params(p)
	p[m.Layout().LU[0]+1] = math.Copysign(0, -1) // L_u[1][0]
	if err := m.SetParams(p); err != nil {
		t.Fatal(err)
	}
	out = append(out, readerFixture{name: "floor0-negzero", b: &Bundle{Model: m}, edit: func(t *testing.T, file []byte) []byte {
		if bytes.Contains(file, []byte("noise_floor")) || !regexp.MustCompile(`[\s\[]-0[,\s\]]`).Match(file) {
			t.Fatalf("the file has a noise_floor or no -0")
		}
		return file
	}})

	// Robust max: quadrature_points removed (both readers take the default
	// 20), and the largest rule, 200 points.
	for _, q := range []int{13, 200} {
		m := build(t, modelCase{"robustmax", gp.SOLVEGP, true, func(d int) gp.Kernel { return must(kernel.NewMatern52(d, 1.2, 0.9)) },
			func() gp.Likelihood {
				return must(likelihood.NewRobustMax(4, likelihood.Epsilon(0.05), likelihood.QuadraturePoints(q)))
			}, nil}, rng)
		f := readerFixture{name: fmt.Sprintf("robustmax-q%d", q), b: &Bundle{Model: m}}
		if q == 13 {
			f.name = "robustmax-default-quadrature"
			f.edit = func(t *testing.T, file []byte) []byte {
				edited := regexp.MustCompile(`,\s*"quadrature_points": 13`).ReplaceAll(file, nil)
				if bytes.Equal(edited, file) {
					t.Fatal("no quadrature_points field to remove")
				}
				return resign(t, edited)
			}
		}
		out = append(out, f)
	}

	// K_uu of two inducing inputs 1e-6 lengthscales apart: it factors
	// without jitter, but with a squared pivot below the floor 1e-11·s, so
	// the policy adds jitter. And a SOLVE-GP model with an orthogonal input
	// on an inducing input, whose C_vv needs jitter relative to K_vv.
	z := mat.NewDense(4, 2, []float64{0.1, 0.1, 0.1 + 1e-6, 0.1, 1.5, -1, -1.2, 0.8})
	o := mat.NewDense(3, 2, []float64{1.5, -1, 0.6, 0.4, -0.5, -0.9})
	rbf := func() gp.Kernel { return must(kernel.NewRBF(2, 1, 1.3)) }
	gauss := func() gp.Likelihood { return must(likelihood.NewGaussian(0.1)) }
	svgp := must(gp.NewSVGP(rbf(), gauss(), z, gp.WithWhitening(true)))
	kuu := mat.NewDense(4, 4, nil)
	svgp.Kernel().Matrix(kuu, z, z)
	var c chol.Cholesky
	if _, err := c.Factor(4, kuu.RawMatrix().Data, 4, chol.JitterPolicy{}, 1); err != nil {
		t.Fatalf("K_uu does not factor without jitter (%v): the fixture does not test the pivot floor", err)
	}
	// (Its K_uu must not need jitter, which would lift C_vv's diagonal to
	// about that jitter.)
	z2 := mat.NewDense(4, 2, []float64{0.1, 0.1, 0.9, 0.3, 1.5, -1, -1.2, 0.8})
	solve := must(gp.NewSOLVEGP(rbf(), gauss(), z2, o, gp.WithWhitening(true)))
	for _, m := range []*gp.Model{svgp, solve} {
		perturbVariational(t, m, rng)
		pr, err := m.Predictor(0)
		if err != nil {
			t.Fatal(err)
		}
		if ju, jv := pr.Jitter(); m.Kind() == gp.SVGP && !(ju > 0) || m.Kind() == gp.SOLVEGP && !(jv > 0) {
			t.Fatalf("%v: jitter %g, %g: the fixture needs none", m.Kind(), ju, jv)
		}
		out = append(out, readerFixture{name: fmt.Sprintf("jitter-%v", m.Kind()), b: &Bundle{Model: m}})
	}
	return out
}

// perturbVariational moves the variational parameters (those after Z and O)
// of m randomly, leaving the kernel, likelihood and inducing inputs as they
// are.
func perturbVariational(t *testing.T, m *gp.Model, rng *rand.Rand) {
	t.Helper()
	p := make([]float64, m.NumParams())
	m.Params(p)
	d, _, m2, _ := m.Dims()
	for i := m.Layout().O + m2*d; i < len(p); i++ {
		p[i] += 0.3 * rng.NormFloat64()
	}
	if err := m.SetParams(p); err != nil {
		t.Fatal(err)
	}
}

// inputsCSV returns x as CSV, with the header line if not empty, columns
// reversed if swap.
func inputsCSV(x *mat.Dense, header string, swap bool) []byte {
	var buf bytes.Buffer
	if header != "" {
		buf.WriteString(header + "\n")
	}
	r, c := x.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			col := j
			if swap {
				col = c - 1 - j
			}
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(strconv.FormatFloat(x.At(i, col), 'g', -1, 64))
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// comparePredictions checks the reader's CSV output against want: the
// columns of solvegp predict, each value within a relative 1e-8. Values
// that cancel to near zero carry rounding errors of the size of their
// column, so the tolerance is relative to at least 1e-3 of the column's
// largest magnitude.
func comparePredictions(t *testing.T, out []byte, want *Prediction, hetero bool, outputs []string) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("reader output: %v\n%s", err, out)
	}
	n, c := want.FMean.Dims()
	var header []string
	var cols []*mat.Dense
	switch {
	case len(outputs) > 0:
		// Per output: f_mean_<t>,f_var_<t>,y_mean_<t>,y_var_<t>.
		for _, o := range outputs {
			header = append(header, "f_mean_"+o, "f_var_"+o, "y_mean_"+o, "y_var_"+o)
		}
	case hetero:
		// Columns f_mean_0,f_mean_1,f_var_0,f_var_1, then y and the
		// noise variance, each as mean and variance.
		header = []string{"f_mean_0", "f_mean_1", "f_var_0", "f_var_1", "y_mean", "y_var", "noise_mean", "noise_var"}
		cols = []*mat.Dense{want.FMean, want.FVar}
	case c == 1:
		header = []string{"f_mean", "f_var", "y_mean", "y_var"}
		cols = []*mat.Dense{want.FMean, want.FVar, want.YMean, want.YVar}
	default:
		for _, name := range []string{"f_mean_", "f_var_", "p_"} {
			for j := 0; j < c; j++ {
				header = append(header, name+strconv.Itoa(j))
			}
		}
		cols = []*mat.Dense{want.FMean, want.FVar, want.YMean}
	}
	if len(rows) != n+1 || strings.Join(rows[0], ",") != strings.Join(header, ",") {
		t.Fatalf("reader output has %d rows, header %q; want %d rows, header %q", len(rows), rows[0], n+1, header)
	}
	type colRef struct {
		m *mat.Dense
		j int
	}
	var refs []colRef
	for j := range outputs {
		for _, m := range []*mat.Dense{want.FMean, want.FVar, want.YMean, want.YVar} {
			refs = append(refs, colRef{m, j})
		}
	}
	for _, m := range cols {
		for j := 0; j < c; j++ {
			refs = append(refs, colRef{m, j})
		}
	}
	if hetero {
		refs = append(refs, colRef{want.YMean, 0}, colRef{want.YVar, 0}, colRef{want.YMean, 1}, colRef{want.YVar, 1})
	}
	for k, r := range refs {
		m, j := r.m, r.j
		scale := 0.0
		for i := 0; i < n; i++ {
			scale = math.Max(scale, math.Abs(m.At(i, j)))
		}
		for i := 0; i < n; i++ {
			got, err := strconv.ParseFloat(rows[i+1][k], 64)
			if err != nil {
				t.Fatalf("row %d, column %s: %v", i+1, header[k], err)
			}
			w := m.At(i, j)
			if tol := 1e-8 * math.Max(math.Max(math.Abs(w), math.Abs(got)), 1e-3*scale); !(math.Abs(got-w) <= tol) {
				t.Errorf("row %d, %s: reader %v, Go %v (relative %.2g)", i+1, header[k], got, w, math.Abs(got-w)/math.Abs(w))
			}
		}
	}
}

// TestDocExample checks that the example of docs/model-format.md is a
// valid model file (once the line that stands for the shortened meta.info
// is removed) that predicts what the document says solvegp predict prints.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "model-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	_, s, _ = strings.Cut(s, "## Example")
	_, s, _ = strings.Cut(s, "```json\n")
	file, s, _ := strings.Cut(s, "```")
	file = strings.Replace(file, ",\n      …\n", "\n", 1)
	b, err := Unmarshal([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Model.Whitened() {
		t.Error("the example is not whitened, as solvegp train's models are")
	}
	_, s, _ = strings.Cut(s, "```\n")
	printed, _, _ := strings.Cut(s, "```")
	rows, err := csv.NewReader(strings.NewReader(printed)).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("the example's predictions: %v, %q", err, printed)
	}
	pred, err := b.Predict(mat.NewDense(2, 2, []float64{1, -1, -2, 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range rows[1:] {
		for j, m := range []*mat.Dense{pred.FMean, pred.FVar, pred.YMean, pred.YVar} {
			want, err := strconv.ParseFloat(row[j], 64)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.At(i, 0); math.Abs(got-want) > 1e-12*math.Abs(want) {
				t.Errorf("row %d, %s: the document says %v, Predict gives %v", i+1, rows[0][j], want, got)
			}
		}
	}
}
