package fuzz

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/convgp"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/patches"
)

// FuzzConvGPKernel builds convolutional and TICK kernels on arbitrary small
// geometries (sizes, strides, dilations, padding, layout) and images with
// few distinct pixel values (so patches repeat), and checks the
// inter-domain covariances against sums over patches computed from the
// definition. Invalid geometries must be rejected with an error.
func FuzzConvGPKernel(f *testing.F) {
	f.Add([]byte{5, 6, 2, 3, 2, 1, 2, 0, 0, 0, 1, 7, 9, 3})
	f.Add([]byte{4, 4, 1, 3, 3, 1, 1, 1, 1, 1, 0, 1, 2, 3, 4, 5})
	f.Add([]byte{3, 7, 3, 2, 4, 2, 1, 2, 0, 1, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &cholBytes{data: data}
		dim := func(lo, hi int) int { return lo + int(r.byte())%(hi-lo+1) }
		pc := patches.Config{
			Height: dim(1, 6), Width: dim(1, 6), Channels: dim(1, 3),
			PatchHeight: dim(1, 4), PatchWidth: dim(1, 4),
			StrideH: dim(1, 3), StrideW: dim(1, 3),
			DilationH: dim(1, 2), DilationW: dim(1, 2),
			Padding: patches.Padding(dim(0, 1)),
			Layout:  patches.Layout(dim(0, 1)),
		}
		tick := r.byte()%2 == 1
		k, err := convgp.New(convgp.Config{Patches: pc, Variance: 0.5 + float64(r.byte())/64,
			Lengthscale: 0.3 + float64(r.byte())/64, TICK: tick, LocLengthscale: 0.5 + float64(r.byte())/32, Workers: 2})
		if err != nil {
			if _, gerr := patches.New(pc); gerr == nil {
				t.Fatalf("valid geometry %+v rejected: %v", pc, err)
			}
			return
		}
		g := k.Geometry()
		P, d, L := g.NumPatches(), g.PatchLen(), g.ImageLen()
		const N, M = 3, 2
		x := mat.NewDense(N, L, nil)
		for i := 0; i < N; i++ {
			for j := 0; j < L; j++ {
				x.Set(i, j, float64(r.byte()%3)/2) // few values: repeated patches
			}
		}
		z := mat.NewDense(M, k.InducingDim(), nil)
		for i := 0; i < M; i++ {
			for j := 0; j < k.InducingDim(); j++ {
				z.Set(i, j, r.small())
			}
		}
		K := mat.NewDense(M, N, nil)
		k.Matrix(K, z, x)
		diag := make([]float64, N)
		k.Diag(diag, x)
		variance, ell, locEll := k.Hyper()
		w := k.Weights()
		kg := func(a, b []float64) float64 {
			s := 0.0
			for i := range a {
				s += (a[i] - b[i]) * (a[i] - b[i])
			}
			return variance * math.Exp(-s/(2*ell*ell))
		}
		kl := func(r1, c1, r2, c2 float64) float64 {
			if !tick {
				return 1
			}
			s := math.Sqrt(3*((r1-r2)*(r1-r2)+(c1-c2)*(c1-c2))) / locEll
			return (1 + s) * math.Exp(-s)
		}
		cols := make([]float64, P*d)
		for n := 0; n < N; n++ {
			if err := g.Im2Col(cols, x.RawRowView(n), 1); err != nil {
				t.Fatal(err)
			}
			for m := 0; m < M; m++ {
				zr := z.RawRowView(m)
				want := 0.0
				for p := 0; p < P; p++ {
					lr, lc := g.Location(p)
					l := 1.0
					if tick {
						l = kl(zr[d], zr[d+1], float64(lr), float64(lc))
					}
					want += w[p] * kg(zr[:d], cols[p*d:p*d+d]) * l
				}
				if math.Abs(K.At(m, n)-want) > 1e-10*math.Max(1, math.Abs(want)) {
					t.Fatalf("Kuf[%d,%d] = %v, want %v", m, n, K.At(m, n), want)
				}
			}
			want := 0.0
			for p := 0; p < P; p++ {
				for q := 0; q < P; q++ {
					r1, c1 := g.Location(p)
					r2, c2 := g.Location(q)
					want += w[p] * w[q] * kg(cols[p*d:p*d+d], cols[q*d:q*d+d]) * kl(float64(r1), float64(c1), float64(r2), float64(c2))
				}
			}
			if math.Abs(diag[n]-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Fatalf("diag[%d] = %v, want %v", n, diag[n], want)
			}
		}
		Kuu := mat.NewDense(M, M, nil)
		k.InducingMatrix(Kuu, z, z)
		for i := 0; i < M; i++ {
			if Kuu.At(i, i) != variance {
				t.Fatalf("Kuu[%d,%d] = %v, want the variance %v", i, i, Kuu.At(i, i), variance)
			}
			for j := 0; j < i; j++ {
				if Kuu.At(i, j) != Kuu.At(j, i) {
					t.Fatal("Kuu not symmetric")
				}
			}
		}
	})
}

// convgpModelFile returns the file of a small deep convolutional model of
// the given kind, hidden layers and TICK setting.
func convgpModelFile(tb testing.TB, kind gp.Kind, hidden int, tick bool) []byte {
	tb.Helper()
	const h, w = 6, 5
	x := mat.NewDense(12, h*w, nil)
	for i, v := 0, 0.0; i < 12*h*w; i++ {
		v = math.Mod(v+0.37, 1)
		x.RawMatrix().Data[i] = v
	}
	cfg := convgp.DeepConfig{Height: h, Width: w, Channels: 1, Classes: 3, Kind: kind, Threads: 1,
		Init:   convgp.InitOptions{Images: 12, PerCentre: 3, Seed: 2},
		Output: convgp.Output{PatchHeight: 2, PatchWidth: 2, M: 3, M2: 2, TICK: tick}}
	if hidden > 0 {
		cfg.Hidden = []convgp.Hidden{{PatchHeight: 2, PatchWidth: 2, Channels: 2, M: 2, M2: 2}}
		cfg.LinearMean = true
	}
	d, err := convgp.NewDeep(x, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := convgp.WriteModel(&buf, d, map[string]string{"seed": "yes"}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzConvGPModelFile decodes arbitrary bytes as a convolutional model file.
// Decoding must return an error wrapping convgp.ErrModelFile, or a model
// whose file decodes again to a model with the same file — never a panic.
func FuzzConvGPModelFile(f *testing.F) {
	for _, c := range []struct {
		kind   gp.Kind
		hidden int
		tick   bool
	}{{gp.SOLVEGP, 0, true}, {gp.SVGP, 1, false}} {
		f.Add(convgpModelFile(f, c.kind, c.hidden, c.tick))
	}
	f.Add([]byte(`{"format":"solvegp-convgp-model","version":1,"params":1}` + "\n\x00\x00\x00\x00\x00\x00\xf0\x3f"))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, info, err := convgp.ReadModel(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, convgp.ErrModelFile) {
				t.Fatalf("error of the wrong class: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if err := convgp.WriteModel(&out, d, info); err != nil {
			t.Fatalf("decoded model does not encode: %v", err)
		}
		d2, info2, err := convgp.ReadModel(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("re-encoded model does not decode: %v", err)
		}
		var out2 bytes.Buffer
		if err := convgp.WriteModel(&out2, d2, info2); err != nil || !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("encoding is not stable (%v)", err)
		}
	})
}
