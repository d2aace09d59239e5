package fuzz

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/patches"
)

// patchesRef is a plain six-loop im2col for the configuration normalized by
// patches.Geometry.Config, with the pads of patches.Geometry.Pads.
// It calls f(pixel index or -1 for padding, patch-matrix index) per tap.
func patchesRef(c patches.Config, outH, outW, batch int, f func(pix, col int)) {
	plen := c.PatchHeight * c.PatchWidth * c.Channels
	for n := 0; n < batch; n++ {
		for oh := 0; oh < outH; oh++ {
			for ow := 0; ow < outW; ow++ {
				row := (n*outH+oh)*outW + ow
				for i := 0; i < c.PatchHeight; i++ {
					for j := 0; j < c.PatchWidth; j++ {
						for ch := 0; ch < c.Channels; ch++ {
							h := oh*c.StrideH - c.PadTop + i*c.DilationH
							w := ow*c.StrideW - c.PadLeft + j*c.DilationW
							col := (i*c.PatchWidth+j)*c.Channels + ch
							if c.Columns == patches.ColumnsCHW {
								col = (ch*c.PatchHeight+i)*c.PatchWidth + j
							}
							p := -1
							if h >= 0 && h < c.Height && w >= 0 && w < c.Width {
								if c.Layout == patches.NHWC {
									p = ((n*c.Height+h)*c.Width+w)*c.Channels + ch
								} else {
									p = ((n*c.Channels+ch)*c.Height+h)*c.Width + w
								}
							}
							f(p, row*plen+col)
						}
					}
				}
			}
		}
	}
}

// FuzzPatches draws a patch configuration (sizes, strides, dilations, every
// padding mode, layout and column order, possibly invalid) and a batch. New
// must either reject it with an error wrapping patches.ErrConfig or accept
// it; accepted configurations must give an Im2Col equal bit for bit to the
// six-loop reference, a Col2Im equal to the reference to rounding, and
// satisfy <Im2Col x, y> = <x, Col2Im y>. Nothing may panic.
func FuzzPatches(f *testing.F) {
	// h, w, c, ph, pw, sh, sw, dh, dw, pad, pt, pb, pl, pr, layout/columns, batch, workers, seed
	f.Add(uint8(28), uint8(28), uint8(1), uint8(5), uint8(5), int8(1), int8(1), int8(1), int8(1), uint8(0), int8(0), int8(0), int8(0), int8(0), uint8(0), uint8(2), uint8(1), uint64(1))
	f.Add(uint8(7), uint8(5), uint8(3), uint8(3), uint8(3), int8(2), int8(2), int8(1), int8(2), uint8(1), int8(0), int8(0), int8(0), int8(0), uint8(3), uint8(3), uint8(2), uint64(2))
	f.Add(uint8(1), uint8(1), uint8(2), uint8(4), uint8(2), int8(3), int8(1), int8(2), int8(1), uint8(2), int8(3), int8(1), int8(0), int8(2), uint8(5), uint8(1), uint8(3), uint64(3))
	f.Add(uint8(6), uint8(6), uint8(1), uint8(7), uint8(2), int8(1), int8(1), int8(1), int8(1), uint8(0), int8(0), int8(0), int8(0), int8(0), uint8(0), uint8(1), uint8(1), uint64(4))
	f.Add(uint8(4), uint8(9), uint8(17), uint8(4), uint8(9), int8(0), int8(-1), int8(0), int8(0), uint8(2), int8(-1), int8(0), int8(0), int8(0), uint8(1), uint8(0), uint8(0), uint64(5))
	f.Fuzz(func(t *testing.T, h, w, c, ph, pw uint8, sh, sw, dh, dw int8, pad uint8, pt, pb, pl, pr int8, lc, batch, workers uint8, seed uint64) {
		cfg := patches.Config{
			Height: int(h % 20), Width: int(w % 20), Channels: int(c % 20),
			Layout:      patches.Layout(lc % 3), // 2 is invalid
			PatchHeight: int(ph % 12), PatchWidth: int(pw % 12),
			StrideH: int(sh % 6), StrideW: int(sw % 6),
			DilationH: int(dh % 5), DilationW: int(dw % 5),
			Padding: patches.Padding(pad % 4), // 3 is invalid
			PadTop:  int(pt % 8), PadBottom: int(pb % 8), PadLeft: int(pl % 8), PadRight: int(pr % 8),
			Columns: patches.ColumnOrder((lc / 3) % 4), // 3 is invalid
			Workers: int(workers%5) - 1,                // -1 is invalid
		}
		g, err := patches.New(cfg)
		if err != nil {
			if !errors.Is(err, patches.ErrConfig) {
				t.Fatalf("New(%+v): error %v does not wrap ErrConfig", cfg, err)
			}
			return
		}
		nc := g.Config()
		nc.PadTop, nc.PadBottom, nc.PadLeft, nc.PadRight = g.Pads()
		if nc.Height < 1 || nc.Width < 1 || nc.Channels < 1 || nc.PatchHeight < 1 || nc.PatchWidth < 1 ||
			nc.StrideH < 1 || nc.StrideW < 1 || nc.DilationH < 1 || nc.DilationW < 1 || nc.Workers < 1 ||
			nc.PadTop < 0 || nc.PadBottom < 0 || nc.PadLeft < 0 || nc.PadRight < 0 {
			t.Fatalf("New accepted %+v (normalized %+v)", cfg, nc)
		}
		if g.OutHeight() < 1 || g.OutWidth() < 1 {
			t.Fatalf("%+v: empty output %dx%d", cfg, g.OutHeight(), g.OutWidth())
		}
		// Every accepted patch must overlap the padded image.
		if (g.OutHeight()-1)*nc.StrideH+(nc.PatchHeight-1)*nc.DilationH+1 > nc.Height+nc.PadTop+nc.PadBottom {
			t.Fatalf("%+v: last patch row leaves the padded image", cfg)
		}
		n := int(batch % 4)
		rng := rand.New(rand.NewPCG(seed, 7))
		x := make([]float64, n*g.ImageLen())
		y := make([]float64, n*g.NumPatches()*g.PatchLen())
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		cols := make([]float64, len(y))
		for i := range cols {
			cols[i] = math.NaN()
		}
		if err := g.Im2Col(cols, x, n); err != nil {
			t.Fatalf("%+v: Im2Col: %v", cfg, err)
		}
		img := make([]float64, len(x))
		if err := g.Col2Im(img, y, n); err != nil {
			t.Fatalf("%+v: Col2Im: %v", cfg, err)
		}
		wantCols := make([]float64, len(y))
		wantImg := make([]float64, len(x))
		patchesRef(nc, g.OutHeight(), g.OutWidth(), n, func(p, q int) {
			if p >= 0 {
				wantCols[q] = x[p]
				wantImg[p] += y[q]
			}
		})
		for i := range cols {
			if math.Float64bits(cols[i]) != math.Float64bits(wantCols[i]) {
				t.Fatalf("%+v: Im2Col[%d] = %v, want %v", cfg, i, cols[i], wantCols[i])
			}
		}
		for i := range img {
			if math.Abs(img[i]-wantImg[i]) > 1e-12*(1+math.Abs(wantImg[i])) {
				t.Fatalf("%+v: Col2Im[%d] = %v, want %v", cfg, i, img[i], wantImg[i])
			}
		}
		var lhs, rhs, mag float64
		for i := range y {
			lhs += cols[i] * y[i]
			mag += math.Abs(cols[i] * y[i])
		}
		for i := range x {
			rhs += x[i] * img[i]
			mag += math.Abs(x[i] * img[i])
		}
		if math.Abs(lhs-rhs) > 1e-12*(1+mag) {
			t.Fatalf("%+v: <Im2Col x, y> = %v, <x, Col2Im y> = %v", cfg, lhs, rhs)
		}
		// Wrong lengths are errors, not panics.
		if err := g.Im2Col(cols, append(x, 0), n); !errors.Is(err, patches.ErrShape) {
			t.Fatalf("%+v: Im2Col with a long src: err %v", cfg, err)
		}
	})
}
