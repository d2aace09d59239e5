package modelfile

import (
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// benchBundle is a SOLVE-GP model with M = M2 = 512 inducing points in 8
// dimensions (about 264 000 parameters).
func benchBundle(b *testing.B) *Bundle {
	rng := rand.New(rand.NewPCG(1, 1))
	k, _ := kernel.NewMatern32(8, 2, 1)
	lik, _ := likelihood.NewGaussian(0.1)
	m, err := gp.NewSOLVEGP(k, lik, randMatrix(rng, 512, 8), randMatrix(rng, 512, 8))
	if err != nil {
		b.Fatal(err)
	}
	return &Bundle{Model: m}
}

func BenchmarkMarshal(b *testing.B) {
	bb := benchBundle(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf, err := Marshal(bb)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(buf)))
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	buf, err := Marshal(benchBundle(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Unmarshal(buf); err != nil {
			b.Fatal(err)
		}
	}
}
