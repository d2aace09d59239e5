package modelfile

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp/likelihood"
)

// TestLikelihoodRoundTrip checks that the Student-t and heteroscedastic
// likelihoods come back from a file with their settings and parameters.
func TestLikelihoodRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	for _, c := range cases() {
		if c.name != "studentt" && c.name != "heteroscedastic" {
			continue
		}
		m := build(t, c, rng)
		buf, err := Marshal(&Bundle{Model: m})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Unmarshal(buf)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch l := b.Model.Likelihood().(type) {
		case *likelihood.StudentT:
			want := m.Likelihood().(*likelihood.StudentT)
			if l.Scale() != want.Scale() || l.DegreesOfFreedom() != want.DegreesOfFreedom() || l.QuadraturePoints() != 17 {
				t.Errorf("studentt: σ %g ν %g q %d, want %g %g 17", l.Scale(), l.DegreesOfFreedom(), l.QuadraturePoints(), want.Scale(), want.DegreesOfFreedom())
			}
		case *likelihood.Heteroscedastic:
			if l.NumLatent() != 2 || l.QuadraturePoints() != likelihood.DefaultHeteroscedasticQuadraturePoints {
				t.Errorf("heteroscedastic: %d latent, %d points", l.NumLatent(), l.QuadraturePoints())
			}
		default:
			t.Errorf("%s: loaded %T", c.name, l)
		}
	}
}

// TestLikelihoodFileErrors: the new likelihoods need format version 4, and
// the Student-t's readable σ and ν must agree with the parameter vector.
func TestLikelihoodFileErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(93, 94))
	var good []byte
	for _, c := range cases() {
		if c.name == "studentt" {
			var err error
			if good, err = Marshal(&Bundle{Model: build(t, c, rng)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	edit := func(old, new string) []byte {
		if !strings.Contains(string(good), old) {
			t.Fatalf("%q not in the file", old)
		}
		return resign(t, []byte(strings.Replace(string(good), old, new, 1)))
	}
	for _, tc := range []struct {
		name string
		file []byte
		msg  string
	}{
		{"v3 with studentt", edit(versionField, `"version": 3`), "format version 4"},
		{"negative dof", edit(`"degrees_of_freedom": `, `"degrees_of_freedom": -`), "degrees_of_freedom"},
		{"dof disagrees", edit(`"degrees_of_freedom": `, `"degrees_of_freedom": 1`), "disagree"},
	} {
		_, err := Unmarshal(tc.file)
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want an ErrFormat naming %q", tc.name, err, tc.msg)
		}
	}
}
