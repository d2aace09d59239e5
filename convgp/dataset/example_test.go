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
