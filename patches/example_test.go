package patches_test

import (
	"fmt"

	"github.com/solvegp/solvegp/patches"
)

// Example cuts the 2×2 patches with stride 2 out of one 4×4 single-channel
// image, then sums them back with Col2Im, the adjoint used for gradients.
func Example() {
	g, err := patches.New(patches.Config{
		Height: 4, Width: 4, Channels: 1,
		PatchHeight: 2, PatchWidth: 2,
		StrideH: 2, StrideW: 2,
		Workers: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	img := make([]float64, g.ImageLen())
	for i := range img {
		img[i] = float64(i)
	}
	cols := make([]float64, g.NumPatches()*g.PatchLen())
	if err := g.Im2Col(cols, img, 1); err != nil {
		fmt.Println(err)
		return
	}
	for p := 0; p < g.NumPatches(); p++ {
		r, c := g.Location(p)
		fmt.Printf("patch %d at (%d,%d): %v\n", p, r, c, cols[p*g.PatchLen():(p+1)*g.PatchLen()])
	}
	back := make([]float64, g.ImageLen())
	if err := g.Col2Im(back, cols, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("col2im:", back)
	// Output:
	// patch 0 at (0,0): [0 1 4 5]
	// patch 1 at (0,1): [2 3 6 7]
	// patch 2 at (1,0): [8 9 12 13]
	// patch 3 at (1,1): [10 11 14 15]
	// col2im: [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]
}

// ExampleGeometry_Im2Col shows SAME padding: a 3×3 patch with stride 1
// keeps the output grid the size of the image, and taps that fall in the
// padding are zeros. Overlapping patches are summed by Col2Im, so each
// pixel comes back multiplied by the number of patches that cover it.
func ExampleGeometry_Im2Col() {
	g, err := patches.New(patches.Config{
		Height: 3, Width: 3, Channels: 1,
		PatchHeight: 3, PatchWidth: 3,
		Padding: patches.Same,
		Workers: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	img := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}
	cols := make([]float64, g.NumPatches()*g.PatchLen())
	if err := g.Im2Col(cols, img, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("output grid:", g.OutHeight(), "×", g.OutWidth())
	fmt.Println("corner patch:", cols[:g.PatchLen()])
	back := make([]float64, g.ImageLen())
	if err := g.Col2Im(back, cols, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("coverage:", back)
	// Output:
	// output grid: 3 × 3
	// corner patch: [0 0 0 0 1 1 0 1 1]
	// coverage: [4 6 4 6 9 6 4 6 4]
}
