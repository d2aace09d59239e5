package modelfile

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/internal/floats"
)

// moreKernelCases are the models of cases() with the kernels of format
// version 2, on two inputs: every kernel type, ARD and not, active columns
// (permuted, on a sum, and nested), in sums and products.
func moreKernelCases(gauss func() gp.Likelihood, real func(*rand.Rand) float64) []modelCase {
	on := func(k kernel.Kernel, cols ...int) kernel.Kernel { return must(kernel.NewActive(k, 2, cols)) }
	return []modelCase{
		{"active-periodic-white-constant", gp.SOLVEGP, false, func(d int) gp.Kernel {
			return must(kernel.NewSum(
				on(must(kernel.NewRBF(1, 0.8, 1)), 0),
				on(must(kernel.NewPeriodic(1, 1.3, 0.9, 0.7)), 1),
				must(kernel.NewWhite(d, 0.05)),
				must(kernel.NewConstant(d, 0.4))))
		}, gauss, real},
		{"rq-linear-polynomial", gp.SVGP, true, func(d int) gp.Kernel {
			return must(kernel.NewProduct(
				must(kernel.NewRationalQuadratic(d, 0.8, 1, 1.1, kernel.Lengthscales([]float64{0.6, 1.4}))),
				must(kernel.NewSum(must(kernel.NewLinear(d, 0.3, 0.5)), must(kernel.NewPolynomial(d, 3, 0.2, 0.7))))))
		}, gauss, real},
		{"active-sum-nested", gp.ODVGP, false, func(d int) gp.Kernel {
			sum := must(kernel.NewSum(
				must(kernel.NewPeriodic(2, 2.1, 1, 0.8, kernel.ARD())),
				must(kernel.NewRationalQuadratic(2, 1.5, 0.9, 0.6))))
			nested := on(on(must(kernel.NewMatern52(1, 0.7, 0.5)), 1), 1, 0)
			return must(kernel.NewSum(on(sum, 1, 0), nested))
		}, gauss, real},
	}
}

// TestVersion1FileLoads loads a file written by the version-1 writer
// (testdata, a SOLVE-GP model with a sum of products of Matérn and RBF
// kernels and a standardizer) and checks its predictions against those
// recorded when it was written, bit for bit.
func TestVersion1FileLoads(t *testing.T) {
	b, err := Load("testdata/v1-solvegp-sum-product.json")
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(3, 2, []float64{0.27394074680436153, -1.1802172375712994, -1.294636641245868, 1.570742885031121, 0.48955628304283705, -0.00838943690414018})
	p, err := b.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	wantMean := []float64{7.034151624782417, 7.0000032135702694, 7.000640877111559}
	wantVar := []float64{12.305336982853877, 12.285451846552238, 12.283650312870929}
	if !floats.EqualBits(p.FMean.RawMatrix().Data, wantMean) || !floats.EqualBits(p.FVar.RawMatrix().Data, wantVar) {
		t.Errorf("predictions %v, %v; written with %v, %v", p.FMean.RawMatrix().Data, p.FVar.RawMatrix().Data, wantMean, wantVar)
	}
	// Saved again, it is a file of the current version.
	out, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), versionField) {
		t.Error("a re-saved version-1 model is not written as the current version")
	}
}

// TestKernelFileErrors checks that files with version-2 kernels that are
// inconsistent, or claim version 1, are rejected with ErrFormat.
func TestKernelFileErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	var c modelCase
	for _, mc := range cases() {
		if mc.name == "active-periodic-white-constant" {
			c = mc
		}
	}
	good, err := Marshal(&Bundle{Model: build(t, c, rng)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unmarshal(good); err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) []byte {
		if !strings.Contains(string(good), old) {
			t.Fatalf("%q not in the file", old)
		}
		return []byte(strings.Replace(string(good), old, new, 1))
	}
	for _, tc := range []struct {
		name string
		file []byte
		msg  string
	}{
		{"v1 with periodic", edit(versionField, `"version": 1`), "format version 2"},
		{"column out of range", edit(`"columns": [
          1
        ]`, `"columns": [
          2
        ]`), "columns"},
		{"repeated columns", edit(`"columns": [
          1
        ]`, `"columns": [
          0, 0
        ]`), "columns"},
		{"unknown field", edit(`"period": `, `"x_period": 1, "period": `), "unknown field"},
		{"unknown type", edit(`"type": "white"`, `"type": "whiteish"`), "unknown kernel type"},
		{"white dimension", edit(`"type": "white",
        "dim": 2`, `"type": "white",
        "dim": 3`), "dimension 3"},
	} {
		_, err := Unmarshal(tc.file)
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want ErrFormat containing %q", tc.name, err, tc.msg)
		}
	}
}
