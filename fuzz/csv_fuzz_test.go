package fuzz

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// FuzzCSVPredict follows the path of "solvegp predict": arbitrary bytes are
// read as a CSV table of inputs and, when they parse, fed to a saved-model
// bundle's Predict. Parsing must give a *data.ParseError or a finite table;
// prediction must give finite means and non-negative variances or an error
// wrapping gp.ErrShape or gp.ErrValue (wrong width, inputs that overflow
// when standardized) — never panic.
func FuzzCSVPredict(f *testing.F) {
	gauss, _ := likelihood.NewGaussian(0.2)
	b := modelFileBundle(f, gp.SOLVEGP, gauss)
	f.Add([]byte("a,b\n1,2\n3,4\n"))
	f.Add([]byte("1,2\n1e308,-1e308\n"))
	f.Add([]byte("1,2,3\n"))
	f.Add([]byte("x\n"))
	f.Add([]byte(" 5 , -0 \n\n7,8\n"))
	f.Add([]byte("\"1\",\"2\"\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		tab, err := data.ReadCSV(bytes.NewReader(in), "in.csv", data.Options{NoTarget: true})
		if err != nil {
			var pe *data.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *data.ParseError: %v", err)
			}
			return
		}
		pred, err := b.Predict(tab.X)
		if err != nil {
			if !errors.Is(err, gp.ErrShape) && !errors.Is(err, gp.ErrValue) {
				t.Fatalf("error of the wrong class: %v", err)
			}
			return
		}
		r, _ := tab.X.Dims()
		for _, m := range []*mat.Dense{pred.FMean, pred.FVar, pred.YMean, pred.YVar} {
			if rows, _ := m.Dims(); rows != r {
				t.Fatalf("%d predictions for %d rows", rows, r)
			}
			for _, v := range m.RawMatrix().Data {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite prediction %v", v)
				}
			}
		}
		for _, v := range pred.FVar.RawMatrix().Data {
			if v < 0 {
				t.Fatalf("negative variance %v", v)
			}
		}
	})
}
