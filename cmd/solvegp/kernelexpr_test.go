package main

import (
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// describe renders a kernel as an expression with resolved columns, to
// compare what an expression builds.
func describe(k kernel.Kernel) string {
	switch k := k.(type) {
	case *kernel.Sum, *kernel.Product:
		op := "+"
		if _, ok := k.(*kernel.Product); ok {
			op = "*"
		}
		var parts []string
		for _, p := range k.(interface{ Parts() []kernel.Kernel }).Parts() {
			parts = append(parts, describe(p))
		}
		return "(" + strings.Join(parts, op) + ")"
	case *kernel.Active:
		cols := make([]string, 0)
		for _, c := range k.Columns() {
			cols = append(cols, string(rune('0'+c)))
		}
		return describe(k.Base()) + "@" + strings.Join(cols, ",")
	case *kernel.Stationary:
		s := strings.ToLower(k.Family().String())
		if k.IsARD() {
			s += "/ard"
		}
		return s
	case *kernel.Periodic:
		return "periodic"
	case *kernel.RationalQuadratic:
		return "rq"
	case *kernel.Polynomial:
		if k.Degree() == 1 {
			return "linear"
		}
		return "polynomial" + string(rune('0'+k.Degree()))
	case *kernel.Constant:
		return "constant"
	case *kernel.White:
		return "white"
	}
	return "?"
}

func TestKernelExpr(t *testing.T) {
	names := []string{"a", "b", "time", "d"}
	in := kernelInit{lengthscale: 1, variance: 1, noise: 0.1}
	for _, tc := range []struct{ expr, want string }{
		{"rbf", "rbf"},
		{"RBF + linear", "(rbf+linear)"},
		{"rbf@0,1+periodic@time", "(rbf@0,1+periodic@2)"},
		{"rbf*periodic+white", "((rbf*periodic)+white)"},
		{"rbf*(periodic+white)", "(rbf*(periodic+white))"},
		{"(rbf+linear)@a,d", "(rbf+linear)@0,3"},
		{"(matern52@1)@d,b", "(matern52@1)@3,1"},
		{"polynomial + polynomial3@ 2 , 3 ", "(polynomial2+polynomial3@2,3)"},
		{"rq*constant", "(rq*constant)"},
		{"matern12+matern32", "(matern12+matern32)"},
	} {
		e, err := parseKernelExpr(tc.expr)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		k, err := e.build(tc.expr, 4, names, in)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		if got := describe(k); got != tc.want {
			t.Errorf("%q builds %s, want %s", tc.expr, got, tc.want)
		}
		if k.Dim() != 4 {
			t.Errorf("%q: dimension %d", tc.expr, k.Dim())
		}
	}
	// -ard gives per-dimension lengthscales of the columns' count.
	e, _ := parseKernelExpr("rbf@0,2")
	k, err := e.build("rbf@0,2", 4, nil, kernelInit{lengthscale: 1, variance: 1, noise: 0.1, ard: true})
	if err != nil {
		t.Fatal(err)
	}
	if ls := k.(*kernel.Active).Base().(*kernel.Stationary).Lengthscales(); len(ls) != 2 {
		t.Errorf("rbf@0,2 with -ard has %d lengthscales, want 2", len(ls))
	}
}

func TestKernelExprErrors(t *testing.T) {
	names := []string{"a", "b", "time"}
	in := kernelInit{lengthscale: 1, variance: 1, noise: 0.1}
	for _, tc := range []struct {
		expr string
		at   int // 1-based character the error points at
		msg  string
	}{
		{"", 1, "expression ends"},
		{"rbf+", 5, "expression ends"},
		{"rbf+*linear", 5, `found '*'`},
		{"cosine", 1, `unknown kernel "cosine"`},
		{"rbf+polynomial0", 5, "unknown kernel"},
		{"(rbf+linear", 12, "missing ')'"},
		{"(rbf linear)", 6, "expected ')'"},
		{"rbf)", 4, "unexpected ')'"},
		{"rbf@", 5, "expected a column"},
		{"rbf@0,", 7, "expected a column"},
		{"rbf@0,7", 7, "column 7 out of range"},
		{"rbf@0+periodic@speed", 16, `no input column named "speed"`},
		{"rbf@0,0", 5, "repeated"},
		{"périodic", 1, `unknown kernel "périodic"`},
		{"rbf+·", 5, `found '·'`},
	} {
		e, err := parseKernelExpr(tc.expr)
		if err == nil {
			_, err = e.build(tc.expr, 3, names, in)
		}
		if err == nil {
			t.Errorf("%q: no error", tc.expr)
			continue
		}
		xe, ok := err.(*exprError)
		if !ok {
			t.Errorf("%q: error %v is not located", tc.expr, err)
			continue
		}
		if got := len([]rune(tc.expr[:xe.pos])) + 1; got != tc.at || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: error at character %d, %q; want character %d containing %q", tc.expr, got, err, tc.at, tc.msg)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 3 || strings.Index(lines[2], "^") != tc.at+1 {
			t.Errorf("%q: the caret does not point at character %d:\n%s", tc.expr, tc.at, err)
		}
	}
	// Without a header, names cannot be resolved.
	e, _ := parseKernelExpr("rbf@time")
	if _, err := e.build("rbf@time", 3, nil, in); err == nil || !strings.Contains(err.Error(), "no header") {
		t.Errorf("rbf@time without a header: %v", err)
	}
}

// TestTrainKernelExpr trains from the command line with a kernel on named
// columns, mini-batch and collapsed, and checks the saved model.
func TestTrainKernelExpr(t *testing.T) {
	dir := t.TempDir()
	trainCSV := writeRegression(t, dir, 200, 5)
	for _, extra := range [][]string{{"-epochs", "5", "-batch", "50"}, {"-collapsed", "-iters", "20"}} {
		model := filepath.Join(dir, "m.json")
		args := append([]string{"train", "-m", "8", "-m2", "8", "-quiet", "-kernel", "rbf@a + linear@a,b + periodic@b * constant + white", "-out", model}, extra...)
		code, _, errOut := runCmd(t, append(args, trainCSV)...)
		if code != exitOK {
			t.Fatalf("train %v: exit %d, stderr %s", extra, code, errOut)
		}
		b, err := modelfile.Load(model)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := describe(b.Model.Kernel()), "(rbf@0+linear@0,1+(periodic@1*constant)+white)"; got != want {
			t.Errorf("%v: saved kernel %s, want %s", extra, got, want)
		}
		if _, err := b.Predict(mat.NewDense(1, 2, []float64{0.5, -1})); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errOut := runCmd(t, "train", "-quiet", "-kernel", "rbf@a+periodic@c", "-out", filepath.Join(dir, "x.json"), trainCSV)
	if code == exitOK || !strings.Contains(errOut, `no input column named "c"`) || !strings.Contains(errOut, "^") {
		t.Errorf("unknown column: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCmd(t, "train", "-quiet", "-kernel", "rbf+*linear", "-out", filepath.Join(dir, "x.json"), trainCSV)
	if code == exitOK || !strings.Contains(errOut, "character 5") {
		t.Errorf("bad expression: exit %d, stderr %q", code, errOut)
	}
}
