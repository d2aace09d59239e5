package blas

// Panic messages for invalid arguments. They are gonum's messages, so callers
// and gonum's test suites observe the same behaviour on bad arguments to every
// routine of this package.
const (
	mLT0         = "blas: m < 0"
	nLT0         = "blas: n < 0"
	kLT0         = "blas: k < 0"
	badUplo      = "blas: illegal triangle"
	badTranspose = "blas: illegal transpose"
	badDiag      = "blas: illegal diagonal"
	badSide      = "blas: illegal side"
	badLdA       = "blas: bad leading dimension of A"
	badLdB       = "blas: bad leading dimension of B"
	badLdC       = "blas: bad leading dimension of C"
	shortA       = "blas: insufficient length of a"
	shortB       = "blas: insufficient length of b"
	shortC       = "blas: insufficient length of c"
)
