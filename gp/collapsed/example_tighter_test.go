package collapsed_test

import (
	"context"
	"fmt"

	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/data/snelson"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// Fit SGPR with 6 inducing points on Snelson's data under the Standard
// (Titsias 2009) and the Tighter (Titsias 2025; Bui et al. 2025) collapsed
// bounds. At the same hyperparameters the Tighter bound is never lower,
// so its optimum is higher too.
func ExampleBoundKind() {
	x, y, _ := snelson.Load()
	z, _, err := inducing.Init(x, 6, 0, inducing.KMeansOptions{Seed: 1})
	if err != nil {
		panic(err)
	}
	fit := func(b collapsed.BoundKind) float64 {
		k, _ := kernel.NewRBF(1, 1, 1)
		noise, _ := likelihood.NewGaussian(0.1)
		md, err := collapsed.New(k, noise, z, nil, collapsed.Options{Bound: b})
		if err != nil {
			panic(err)
		}
		res, err := md.Fit(context.Background(), x, y, train.LBFGSOptions{MaxIter: 300})
		if err != nil {
			panic(err)
		}
		return res.Bound
	}
	standard, tighter := fit(collapsed.Standard), fit(collapsed.Tighter)
	fmt.Println(collapsed.Tighter, "bound above", collapsed.Standard, "bound:", tighter > standard)
	// Output:
	// tighter bound above standard bound: true
}
