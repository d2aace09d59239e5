package gp

// Cloner is implemented by kernels and likelihoods that can copy
// themselves. Every kernel and likelihood of packages gp/kernel,
// gp/likelihood and convgp implements it (a kernel.Sum or kernel.Product
// only when all its parts do).
//
// Clone returns a copy of the receiver, of the same type and with the same
// parameters and settings, that shares no mutable state with it: setting
// the parameters (or the goroutine budget) of either leaves the other
// unchanged, and the two may be used concurrently. The result has type any
// so that a package can implement Cloner without importing gp; a kernel's
// copy must be a Kernel and a likelihood's a Likelihood. Clone returns nil
// when the value cannot be copied.
type Cloner interface {
	Clone() any
}
