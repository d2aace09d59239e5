package modelfile

import (
	"fmt"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
)

// kernelsVersion is the first format version with the kernels of this
// file (periodic, rq, linear, polynomial, constant, white) and with
// "columns", the active input columns of any kernel.
const kernelsVersion = 2

// encodeMoreKernel encodes the kernels added in format version 2; ok is
// false for a kernel it does not know.
func encodeMoreKernel(k gp.Kernel) (kj *kernelJSON, ok bool, err error) {
	switch k := k.(type) {
	case *kernel.Periodic:
		return &kernelJSON{Type: "periodic", Dim: k.Dim(), ARD: k.IsARD(), Lengthscales: k.Lengthscales(), Period: k.Period(), Variance: k.Variance()}, true, nil
	case *kernel.RationalQuadratic:
		return &kernelJSON{Type: "rq", Dim: k.Dim(), ARD: k.IsARD(), Lengthscales: k.Lengthscales(), Alpha: k.Alpha(), Variance: k.Variance()}, true, nil
	case *kernel.Polynomial:
		if k.Degree() == 1 {
			return &kernelJSON{Type: "linear", Dim: k.Dim(), Variance: k.Variance(), Offset: k.Offset()}, true, nil
		}
		return &kernelJSON{Type: "polynomial", Dim: k.Dim(), Degree: k.Degree(), Variance: k.Variance(), Offset: k.Offset()}, true, nil
	case *kernel.Constant:
		return &kernelJSON{Type: "constant", Dim: k.Dim(), Variance: k.Variance()}, true, nil
	case *kernel.White:
		return &kernelJSON{Type: "white", Dim: k.Dim(), Variance: k.Variance()}, true, nil
	case *kernel.Active:
		base, err := encodeKernel(k.Base())
		if err != nil {
			return nil, true, err
		}
		cols := k.Columns()
		if base.Columns != nil {
			// Active of Active: column j of the inner selection is
			// column cols[inner[j]] of the input.
			inner := base.Columns
			base.Columns = make([]int, len(inner))
			for j, c := range inner {
				base.Columns[j] = cols[c]
			}
		} else {
			base.Columns = cols
		}
		return base, true, nil
	}
	return nil, false, nil
}

// decodeActive decodes a kernel with "columns": the kernel the rest of kj
// describes, on len(columns) inputs, applied to those columns of d.
func decodeActive(kj *kernelJSON, d, depth int) (gp.Kernel, error) {
	cols := kj.Columns
	if len(cols) > d {
		return nil, bad("%s kernel on %d columns of %d inputs", kj.Type, len(cols), d)
	}
	seen := make(map[int]bool, len(cols))
	for _, c := range cols {
		if c < 0 || c >= d || seen[c] {
			return nil, bad("%s kernel columns %v: each must be distinct and in [0, %d)", kj.Type, cols, d)
		}
		seen[c] = true
	}
	base := *kj
	base.Columns = nil
	k, err := decodeKernel(&base, len(cols), depth+1)
	if err != nil {
		return nil, err
	}
	a, err := kernel.NewActive(k, d, cols)
	if err != nil {
		return nil, bad("%v", err)
	}
	return a, nil
}

// decodeMoreKernel decodes the kernel types added in format version 2; ok
// is false for another type.
func decodeMoreKernel(kj *kernelJSON, d int) (k gp.Kernel, ok bool, err error) {
	switch kj.Type {
	case "periodic", "rq", "linear", "polynomial", "constant", "white":
	default:
		return nil, false, nil
	}
	if kj.Dim != d {
		return nil, true, bad("%s kernel of dimension %d for %d inputs", kj.Type, kj.Dim, d)
	}
	var opts []kernel.Option
	if kj.Type == "periodic" || kj.Type == "rq" {
		want := 1
		if kj.ARD {
			want = d
		}
		if len(kj.Lengthscales) != want {
			return nil, true, bad("%s kernel has %d lengthscales, want %d", kj.Type, len(kj.Lengthscales), want)
		}
		if kj.ARD {
			opts = append(opts, kernel.Lengthscales(kj.Lengthscales))
		}
	}
	switch kj.Type {
	case "periodic":
		k, err = kernel.NewPeriodic(d, kj.Period, kj.Lengthscales[0], kj.Variance, opts...)
	case "rq":
		k, err = kernel.NewRationalQuadratic(d, kj.Alpha, kj.Lengthscales[0], kj.Variance, opts...)
	case "linear":
		k, err = kernel.NewLinear(d, kj.Variance, kj.Offset)
	case "polynomial":
		k, err = kernel.NewPolynomial(d, kj.Degree, kj.Variance, kj.Offset)
	case "constant":
		k, err = kernel.NewConstant(d, kj.Variance)
	case "white":
		k, err = kernel.NewWhite(d, kj.Variance)
	}
	if err != nil {
		return nil, true, bad("%v", err)
	}
	return k, true, nil
}

// checkMoreKernelValues checks the readable hyperparameters of the kernels
// of format version 2 against those the parameter vector gave them; ok is
// false for another kernel.
func checkMoreKernelValues(kj *kernelJSON, k gp.Kernel, where string) (ok bool, err error) {
	var vals []val
	switch k := k.(type) {
	case *kernel.Active:
		return true, checkKernelValues(kj, k.Base(), where)
	case *kernel.Periodic:
		vals = append(lsVals(kj.Lengthscales, k.Lengthscales()), val{"period", kj.Period, k.Period()}, val{"variance", kj.Variance, k.Variance()})
	case *kernel.RationalQuadratic:
		vals = append(lsVals(kj.Lengthscales, k.Lengthscales()), val{"alpha", kj.Alpha, k.Alpha()}, val{"variance", kj.Variance, k.Variance()})
	case *kernel.Polynomial:
		vals = []val{{"variance", kj.Variance, k.Variance()}, {"offset", kj.Offset, k.Offset()}}
	case *kernel.Constant:
		vals = []val{{"variance", kj.Variance, k.Variance()}}
	case *kernel.White:
		vals = []val{{"variance", kj.Variance, k.Variance()}}
	default:
		return false, nil
	}
	for _, v := range vals {
		if !approxEqual(v.file, v.got) {
			return true, bad("%s %s is %g, the parameter vector gives %g", where, v.name, v.file, v.got)
		}
	}
	return true, nil
}

// val is a readable hyperparameter: its value in the file and the one the
// parameter vector gives.
type val struct {
	name      string
	file, got float64
}

// lsVals pairs the lengthscales in the file with the kernel's.
func lsVals(file, got []float64) []val {
	out := make([]val, len(got))
	for i := range got {
		out[i] = val{fmt.Sprintf("lengthscale %d", i+1), file[i], got[i]}
	}
	return out
}

// checkKernelVersion rejects, in a file of a version before
// kernelsVersion, the kernel types and fields that version introduced: a
// reader of that version would not have accepted them.
func checkKernelVersion(kj *kernelJSON, version int) error {
	if kj == nil || version >= kernelsVersion {
		return nil
	}
	switch kj.Type {
	case "rbf", "matern12", "matern32", "matern52", "sum", "product":
	default:
		return bad("kernel type %q needs format version %d, the file has version %d", kj.Type, kernelsVersion, version)
	}
	if kj.Period != 0 || kj.Alpha != 0 || kj.Degree != 0 || kj.Offset != 0 || kj.Columns != nil {
		return bad("kernel fields period, alpha, degree, offset and columns need format version %d, the file has version %d", kernelsVersion, version)
	}
	for _, p := range kj.Parts {
		if err := checkKernelVersion(p, version); err != nil {
			return err
		}
	}
	return nil
}
