// Package randstate saves and restores the PCG generators behind the
// models' random streams, for train.RandomStater.
package randstate

import "math/rand/v2"

// Save returns the state of p.
func Save(p *rand.PCG) []byte {
	b, err := p.MarshalBinary()
	if err != nil {
		panic(err) // a PCG's state always encodes
	}
	return b
}

// Restore sets p to a state returned by Save. A state that is not one is an
// error, and leaves p as it was.
func Restore(p *rand.PCG, state []byte) error {
	var q rand.PCG
	if err := q.UnmarshalBinary(state); err != nil {
		return err
	}
	*p = q
	return nil
}
