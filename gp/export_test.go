package gp

// Internal test helpers for the external tests of package gp_test, which
// may import packages that import gp (such as gp/collapsed).
var (
	NatData    = natData
	NatModel   = natModel
	FactorQ    = factorQ
	FactorGrad = factorGrad
	CloseVec   = closeVec
	CloseSym   = closeSym
	Kmat       = kmat
	CholLower  = cholLower
	Mul        = mul
)
