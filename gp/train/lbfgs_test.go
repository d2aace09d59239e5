package train

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

func rosenbrock(x, g []float64) (float64, error) {
	a, b := x[0], x[1]
	f := (1-a)*(1-a) + 100*(b-a*a)*(b-a*a)
	g[0] = -(-2*(1-a) - 400*a*(b-a*a))
	g[1] = -(200 * (b - a*a))
	return -f, nil
}

func TestLBFGSRosenbrock(t *testing.T) {
	res, err := MaximizeLBFGS(context.Background(), rosenbrock, []float64{-1.2, 1}, LBFGSOptions{GradTol: 1e-10, FuncTol: 1e-30})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.X[0]-1) > 1e-7 || math.Abs(res.X[1]-1) > 1e-7 || res.Reason != "gradient" {
		t.Errorf("result %+v", res)
	}
	if res.Iterations > 100 {
		t.Errorf("%d iterations", res.Iterations)
	}
}

func TestLBFGSOnIteration(t *testing.T) {
	var iters []int
	var fs []float64
	res, err := MaximizeLBFGS(context.Background(), rosenbrock, []float64{-1.2, 1}, LBFGSOptions{
		OnIteration: func(it int, f float64) { iters, fs = append(iters, it), append(fs, f) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(iters) != res.Iterations || len(iters) == 0 {
		t.Fatalf("%d calls for %d iterations", len(iters), res.Iterations)
	}
	for i, it := range iters {
		if it != i+1 {
			t.Fatalf("call %d reports iteration %d", i, it)
		}
		if i > 0 && fs[i] < fs[i-1] {
			t.Fatalf("objective went from %g to %g at iteration %d", fs[i-1], fs[i], it)
		}
	}
	if fs[len(fs)-1] != res.F {
		t.Fatalf("last reported objective %g, result %g", fs[len(fs)-1], res.F)
	}
}

func TestLBFGSIllConditionedQuadratic(t *testing.T) {
	n := 50
	f := func(x, g []float64) (float64, error) {
		var v float64
		for i := range x {
			c := math.Pow(1e3, float64(i)/float64(n-1)) // condition number 1e3
			r := x[i] - float64(i)
			v -= 0.5 * c * r * r
			g[i] = -c * r
		}
		return v, nil
	}
	res, err := MaximizeLBFGS(context.Background(), f, make([]float64, n), LBFGSOptions{GradTol: 1e-8, FuncTol: 1e-30, Memory: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.X {
		if math.Abs(v-float64(i)) > 1e-7 {
			t.Fatalf("x[%d] = %v, want %d (%+v)", i, v, i, res.Reason)
		}
	}
	t.Logf("%d iterations, %d evaluations", res.Iterations, res.Evaluations)
}

func TestLBFGSUndefinedRegion(t *testing.T) {
	// −log cosh(x − 2) has a saturating gradient, so the secant scaling
	// overshoots far into the region x > 4 where f fails.
	f := func(x, g []float64) (float64, error) {
		if x[0] > 4 {
			return 0, errors.New("undefined")
		}
		g[0] = -math.Tanh(x[0] - 2)
		return -math.Log(math.Cosh(x[0] - 2)), nil
	}
	res, err := MaximizeLBFGS(context.Background(), f, []float64{-10}, LBFGSOptions{GradTol: 1e-10})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.X[0]-2) > 1e-6 {
		t.Errorf("x = %v (%s)", res.X[0], res.Reason)
	}
	if res.Failed == 0 {
		t.Errorf("the test did not exercise a failed evaluation")
	}
	if _, err := MaximizeLBFGS(context.Background(), f, []float64{5}, LBFGSOptions{}); err == nil {
		t.Error("failure at the start not reported")
	}
}

func TestLBFGSCancelAndOptions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	f := func(x, g []float64) (float64, error) {
		calls++
		if calls == 5 {
			cancel()
		}
		return rosenbrock(x, g)
	}
	res, err := MaximizeLBFGS(ctx, f, []float64{-1.2, 1}, LBFGSOptions{})
	if !errors.Is(err, context.Canceled) || res.F < -24.2-1e-9 {
		t.Errorf("err %v, F %v", err, res.F)
	}
	// Cancellation stops a line search at its next evaluation, not at the
	// end of the iteration. From x = 0 the first step of the search for the
	// maximum of −(x − 100)² is 1 long, and it doubles the step about seven
	// times; canceled at its first evaluation, it makes no other.
	ctx, cancel = context.WithCancel(context.Background())
	calls = 0
	far := func(x, g []float64) (float64, error) {
		calls++
		if calls == 2 {
			cancel()
		}
		g[0] = -2 * (x[0] - 100)
		return -(x[0] - 100) * (x[0] - 100), nil
	}
	res, err = MaximizeLBFGS(ctx, far, []float64{0}, LBFGSOptions{})
	if !errors.Is(err, context.Canceled) || calls != 2 || res.Evaluations != 2 || res.X[0] != 0 {
		t.Errorf("canceled in the line search: err %v, %d calls, %d evaluations, x %v", err, calls, res.Evaluations, res.X)
	}
	if _, err := MaximizeLBFGS(context.Background(), rosenbrock, nil, LBFGSOptions{}); err == nil {
		t.Error("empty start accepted")
	}
	if _, err := MaximizeLBFGS(context.Background(), nil, []float64{0, 0}, LBFGSOptions{}); err == nil {
		t.Error("nil objective accepted")
	}
	// A failure at the start says why.
	cause := errors.New("y[0] is NaN")
	if _, err := MaximizeLBFGS(context.Background(), func(x, g []float64) (float64, error) { return 0, cause }, []float64{0, 0}, LBFGSOptions{}); !errors.Is(err, cause) {
		t.Errorf("failing start: %v, want it to wrap the objective's error", err)
	}
	if _, err := MaximizeLBFGS(context.Background(), func(x, g []float64) (float64, error) { g[1] = math.Inf(1); return 0, nil }, []float64{0, 0}, LBFGSOptions{}); err == nil || !strings.Contains(err.Error(), "gradient entry 1") {
		t.Errorf("infinite gradient at the start: %v", err)
	}
	if _, err := MaximizeLBFGS(context.Background(), rosenbrock, []float64{0, 0}, LBFGSOptions{GradTol: math.NaN()}); err == nil {
		t.Error("NaN tolerance accepted")
	}
	// The message names the numbers, not the callbacks (printed as <nil>).
	if _, err := MaximizeLBFGS(context.Background(), rosenbrock, []float64{0, 0}, LBFGSOptions{MaxIter: -2}); err == nil ||
		!strings.Contains(err.Error(), "MaxIter -2") || strings.Contains(err.Error(), "nil") {
		t.Errorf("negative MaxIter: %v", err)
	}
	res, _ = MaximizeLBFGS(context.Background(), rosenbrock, []float64{-1.2, 1}, LBFGSOptions{MaxIter: 3})
	if res.Iterations != 3 || res.Reason != "iterations" {
		t.Errorf("MaxIter: %+v", res)
	}
}

// TestLBFGSHugeLimits checks that "no limit" values of MaxIter and Memory
// work: the default MaxEvals, 20·MaxIter, saturates instead of
// overflowing to a negative bound that stopped the run before its first
// iteration, and the correction pairs are allocated as they are
// collected, not all at once.
func TestLBFGSHugeLimits(t *testing.T) {
	want, _ := MaximizeLBFGS(context.Background(), rosenbrock, []float64{-1.2, 1}, LBFGSOptions{})
	if want.Reason != "gradient" && want.Reason != "function" {
		t.Fatalf("default run: %+v", want)
	}
	for _, o := range []LBFGSOptions{
		{MaxIter: math.MaxInt},
		{MaxIter: math.MaxInt/20 + 1},
		{Memory: 10, MaxIter: math.MaxInt, MaxEvals: math.MaxInt},
	} {
		res, err := MaximizeLBFGS(context.Background(), rosenbrock, []float64{-1.2, 1}, o)
		if err != nil || res.Reason != want.Reason || res.Iterations != want.Iterations || res.F != want.F {
			t.Errorf("%+v: %+v, %v; want %+v", o, res, err, want)
		}
	}
	// Every pair is kept: more than the default 10, fewer than Memory.
	for _, mem := range []int{1 << 50, math.MaxInt} {
		res, err := MaximizeLBFGS(context.Background(), rosenbrock, []float64{-1.2, 1}, LBFGSOptions{Memory: mem})
		if err != nil || res.Reason != "gradient" && res.Reason != "function" || !(res.F > -1e-8) {
			t.Errorf("Memory %d: %+v, %v", mem, res, err)
		}
	}
}

// TestLBFGSPairsKept checks that the correction pairs stay consistent
// (ρ_i = 1/(s_i·y_i)) when a step fails the curvature test with the memory
// full: the candidate pair must not be written over a kept one. The
// objective, −x₀²/2 + x₁²/200 from (3, 0.001), is concave in x₀ and convex
// in x₁: once x₀ has settled the line search runs along x₁ without finding
// curvature, and s·y < 0.
func TestLBFGSPairsKept(t *testing.T) {
	defer func() { testHookLBFGSPairs = nil }()
	f := func(x, g []float64) (float64, error) {
		g[0], g[1] = -x[0], 0.01*x[1]
		return -0.5*x[0]*x[0] + 0.005*x[1]*x[1], nil
	}
	for _, mem := range []int{1, 2, 3} {
		updates, bad := 0, 0
		testHookLBFGSPairs = func(s, y [][]float64, rho []float64) {
			updates++
			for i := range s {
				if r := rho[i] * dot(s[i], y[i]); !(math.Abs(r-1) < 1e-9) {
					bad++
					t.Errorf("memory %d, update %d: pair %d has ρ·(s·y) = %v", mem, updates, i, r)
				}
			}
		}
		if _, err := MaximizeLBFGS(context.Background(), f, []float64{3, 0.001}, LBFGSOptions{Memory: mem, MaxIter: 30}); err != nil {
			t.Fatal(err)
		}
		if bad > 0 || updates < 10 {
			t.Fatalf("memory %d: %d updates, %d inconsistent", mem, updates, bad)
		}
	}
}

// TestLBFGSStopsAtRoundingLevel checks that a line search whose steps can
// no longer gain more than the function tolerance ends the run as
// converged ("function") instead of halving the step forty times: here the
// gradient is off by 1e-5 near the optimum, as rounding makes it in large
// problems, so that no step along it passes the sufficient-decrease test.
func TestLBFGSStopsAtRoundingLevel(t *testing.T) {
	f := func(x, g []float64) (float64, error) {
		g[0] = -2*(x[0]-1) + 1e-5
		return -(x[0] - 1) * (x[0] - 1), nil
	}
	res, err := MaximizeLBFGS(context.Background(), f, []float64{0}, LBFGSOptions{GradTol: 1e-9})
	if err != nil || res.Reason != "function" || res.Evaluations > 12 || math.Abs(res.X[0]-1) > 1e-4 {
		t.Errorf("err %v, reason %q after %d evaluations at x %v", err, res.Reason, res.Evaluations, res.X)
	}
}
