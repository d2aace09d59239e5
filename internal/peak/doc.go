// Package peak measures the floating-point peak of the running machine: the
// rate at which one core (or several, together) completes independent
// float64 fused multiply-adds on the widest vector unit the CPU offers.
//
// Benchmarks report their rates as a share of this measured peak, so each
// figure says what it means on the hardware it was taken on: a nominal
// peak from a data sheet ignores the clock the core actually holds under
// vector load, which differs by part, by power limit and, in a virtual
// machine, by host.
//
// The loops are generated assembly (gen.go): n iterations of one FMA into
// each of many independent accumulators, more than latency × pipes, so the
// FMA units never wait. Flops are counted as two per lane per FMA.
package peak

//go:generate go run gen.go
