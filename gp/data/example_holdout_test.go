package data_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data"
)

// Hold out about a fifth of the rows of streamed shards for validation,
// and read each side in bounded batches.
func ExampleHoldOut() {
	x := mat.NewDense(1000, 1, nil)
	y := make([]float64, 1000)
	for i := range y {
		x.Set(i, 0, float64(i))
		y[i] = float64(i % 7)
	}
	shard, err := data.MemoryShard("rows", x, y)
	if err != nil {
		log.Fatal(err)
	}
	train, valid, err := data.HoldOut([]data.Shard{shard}, 0.2, 1)
	if err != nil {
		log.Fatal(err)
	}
	count := func(shards []data.Shard) (n, batches int) {
		err := data.ReadShards(shards, 256, func(x *mat.Dense, y []float64) error {
			n += len(y)
			batches++
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
		return n, batches
	}
	nt, bt := count(train)
	nv, bv := count(valid)
	fmt.Printf("training %d rows in %d batches, validation %d rows in %d batch(es)\n", nt, bt, nv, bv)
	// Output:
	// training 791 rows in 4 batches, validation 209 rows in 1 batch(es)
}
