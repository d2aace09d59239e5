package patches

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/solvegp/solvegp/blas"
)

// Benchmarks of im2col at the target sizes: batch 64 of 28x28x1 (Fashion-MNIST) and 32x32x3
// (CIFAR-10) images, 5x5 and 3x3 patches, stride 1 and 2, VALID and SAME
// padding, NHWC images with HWC columns (named HxWxC, e.g. 32x32x3) and NCHW
// images with CHW columns (named CxHxW, e.g. 3x32x32). Each configuration is timed four ways, all single-threaded
// (Workers 1) unless noted, and reports GB/s written to the patch matrix:
//
//	im2col   Geometry.Im2Col (SIMD copy kernels)
//	loop     a plain six-loop Go im2col (bounds checks and padding test per value)
//	copy     the builtin copy of as many bytes as the patch matrix (the
//	         memory-bandwidth ceiling: it reads and writes that many bytes)
//	col2im   Geometry.Col2Im (reported as GB/s read from the patch matrix)
//	im2col-par  Geometry.Im2Col with Workers = GOMAXPROCS
//	im2col-direct, im2col-padded  Geometry.Im2Col with the copy plan over
//	         the image itself and over a zero-padded copy of it (SAME
//	         padding; im2col is whichever New picked)
type benchCase struct {
	name string
	cfg  Config
}

func benchCases() []benchCase {
	var cs []benchCase
	for _, img := range []struct {
		name    string
		h, w, c int
		layout  Layout
	}{
		{"28x28x1", 28, 28, 1, NHWC}, {"32x32x3", 32, 32, 3, NHWC},
		{"1x28x28", 28, 28, 1, NCHW}, {"3x32x32", 32, 32, 3, NCHW},
	} {
		for _, k := range []int{5, 3} {
			for _, s := range []int{1, 2} {
				for _, pad := range []Padding{Valid, Same} {
					cs = append(cs, benchCase{
						name: fmt.Sprintf("%s/k%d/s%d/%v", img.name, k, s, pad),
						cfg: Config{Height: img.h, Width: img.w, Channels: img.c, Layout: img.layout, PatchHeight: k, PatchWidth: k,
							StrideH: s, StrideW: s, Padding: pad, Workers: 1},
					})
				}
			}
		}
	}
	return cs
}

const benchBatch = 64

// plainIm2Col is the straightforward loop the SIMD path is compared with: the
// six loops of the default column order of the layout, with bounds checks and
// a padding test per value.
func plainIm2Col(dst, src []float64, batch int, g *Geometry) {
	c := g.cfg
	H, W, C := c.Height, c.Width, c.Channels
	i := 0
	if c.Layout == NCHW {
		for n := 0; n < batch; n++ {
			for oh := 0; oh < g.outH; oh++ {
				for ow := 0; ow < g.outW; ow++ {
					for ch := 0; ch < C; ch++ {
						for kh := 0; kh < c.PatchHeight; kh++ {
							ih := oh*c.StrideH - g.padT + kh*c.DilationH
							for kw := 0; kw < c.PatchWidth; kw++ {
								iw := ow*c.StrideW - g.padL + kw*c.DilationW
								if ih >= 0 && ih < H && iw >= 0 && iw < W {
									dst[i] = src[((n*C+ch)*H+ih)*W+iw]
								} else {
									dst[i] = 0
								}
								i++
							}
						}
					}
				}
			}
		}
		return
	}
	for n := 0; n < batch; n++ {
		for oh := 0; oh < g.outH; oh++ {
			for ow := 0; ow < g.outW; ow++ {
				for kh := 0; kh < c.PatchHeight; kh++ {
					ih := oh*c.StrideH - g.padT + kh*c.DilationH
					for kw := 0; kw < c.PatchWidth; kw++ {
						iw := ow*c.StrideW - g.padL + kw*c.DilationW
						for ch := 0; ch < C; ch++ {
							if ih >= 0 && ih < H && iw >= 0 && iw < W {
								dst[i] = src[((n*H+ih)*W+iw)*C+ch]
							} else {
								dst[i] = 0
							}
							i++
						}
					}
				}
			}
		}
	}
}

// measure runs fn b.N times and reports GB/s (bytes per wall-clock second)
// and, where available, GB/s-cpu (bytes per CPU second of the benchmark's
// thread; meaningful for single-threaded runs only).
func measure(b *testing.B, bytes int, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(bytes))
	b.ResetTimer()
	c0, ok := threadCPU()
	for i := 0; i < b.N; i++ {
		fn()
	}
	c1, _ := threadCPU()
	b.StopTimer()
	total := float64(bytes) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds()/1e9, "GB/s")
	if ok && c1 > c0 {
		b.ReportMetric(total/(c1-c0)/1e9, "GB/s-cpu")
	}
}

func BenchmarkIm2Col(b *testing.B) {
	for _, bc := range benchCases() {
		g, err := New(bc.cfg)
		if err != nil {
			b.Fatal(err)
		}
		src := make([]float64, benchBatch*g.ImageLen())
		for i := range src {
			src[i] = float64(i%97) - 48
		}
		dst := make([]float64, benchBatch*g.NumPatches()*g.PatchLen())
		bytes := 8 * len(dst)
		b.Run(bc.name+"/im2col", func(b *testing.B) {
			measure(b, bytes, func() {
				if err := g.Im2Col(dst, src, benchBatch); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(bc.name+"/loop", func(b *testing.B) {
			measure(b, bytes, func() { plainIm2Col(dst, src, benchBatch, g) })
		})
		b.Run(bc.name+"/copy", func(b *testing.B) {
			from := make([]float64, len(dst))
			measure(b, bytes, func() { copy(dst, from) })
		})
		b.Run(bc.name+"/col2im", func(b *testing.B) {
			img := make([]float64, len(src))
			measure(b, bytes, func() {
				if err := g.Col2Im(img, dst, benchBatch); err != nil {
					b.Fatal(err)
				}
			})
		})
		if testing.Short() {
			continue
		}
		if bc.cfg.Padding != Valid && g.padOK {
			// The copy plans New chooses between (see the cost model
			// at the end of New).
			for _, plan := range []string{"direct", "padded", "overread"} {
				gf, err := New(bc.cfg)
				if err != nil {
					b.Fatal(err)
				}
				switch plan {
				case "direct", "padded":
					gf.setPadded(plan == "padded")
				case "overread":
					if gf.overreadBlocks == nil {
						continue
					}
					gf.setOverread()
				}
				b.Run(bc.name+"/im2col-"+plan, func(b *testing.B) {
					measure(b, bytes, func() {
						if err := gf.Im2Col(dst, src, benchBatch); err != nil {
							b.Fatal(err)
						}
					})
				})
			}
		}
		par := bc.cfg
		par.Workers = 0
		gp, err := New(par)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name+"/im2col-par", func(b *testing.B) {
			measure(b, bytes, func() {
				if err := gp.Im2Col(dst, src, benchBatch); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkPackRows packs the whole patch matrix of the batch into GEMM
// micro-panels (w = 8) block by block, 96 rows at a time as a GEMM driver
// would, against materializing it with Im2Col and packing it with blas.PackA.
// Reports GB/s of packed output.
func BenchmarkPackRows(b *testing.B) {
	const w, block = 8, 96
	for _, bc := range benchCases() {
		if bc.cfg.StrideH != 1 {
			continue
		}
		g, err := New(bc.cfg)
		if err != nil {
			b.Fatal(err)
		}
		src := make([]float64, benchBatch*g.ImageLen())
		rows, PL := benchBatch*g.NumPatches(), g.PatchLen()
		bytes := 8 * PackedLen(rows, PL, w)
		b.Run(bc.name+"/packrows", func(b *testing.B) {
			dst := make([]float64, PackedLen(block, PL, w))
			measure(b, bytes, func() {
				for r := 0; r < rows; r += block {
					if err := g.PackRows(dst, src, benchBatch, r, min(block, rows-r), 0, PL, w); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
		b.Run(bc.name+"/im2col+packA", func(b *testing.B) {
			cols := make([]float64, rows*PL)
			dst := make([]float64, PackedLen(block, PL, w))
			measure(b, bytes, func() {
				if err := g.Im2Col(cols, src, benchBatch); err != nil {
					b.Fatal(err)
				}
				for r := 0; r < rows; r += block {
					blas.PackA(w, dst, cols[r*PL:], PL, false, min(block, rows-r), PL)
				}
			})
		})
	}
}
