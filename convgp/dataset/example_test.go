package dataset_test

import (
	"fmt"

	"github.com/solvegp/solvegp/convgp/dataset"
)

// Fashion-MNIST from Debian's dataset-fashion-mnist package.
func ExampleLoadFashionMNIST() {
	train, test, err := dataset.LoadFashionMNIST(dataset.FashionMNISTDir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(train.N, test.N, train.Height, train.Width, train.Channels)
}

// Images become the matrix and labels that convgp's models take.
func ExampleImages_Matrix() {
	im := &dataset.Images{N: 2, Height: 1, Width: 3, Channels: 1,
		Pixels: []float64{0, 0.5, 1, 1, 0.5, 0}, Labels: []int{1, 0}, Classes: 2}
	x, err := im.Matrix() // for convgp.NewDeep, Deep.Predict, Deep.Evaluate
	if err != nil {
		fmt.Println(err)
		return
	}
	y := im.FloatLabels() // for Deep.Evaluate and train.Fit
	r, c := x.Dims()
	fmt.Println(r, c, x.RawRowView(1), y)
	// Output:
	// 2 3 [1 0.5 0] [1 0]
}
