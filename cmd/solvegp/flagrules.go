package main

import (
	"flag"
	"fmt"
	"strings"
)

// checkM2 reports -m2 given with -model svgp: SVGP has no orthogonal
// inducing points, so the value would be ignored without a word. An
// explicit -m2 0 is accepted. It must run before modelSpec.check, which
// sets m2 to 0 for SVGP.
func checkM2(fs *flag.FlagSet, spec *modelSpec) error {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "m2" })
	if set && spec.m2 != 0 && strings.EqualFold(spec.kind, "svgp") {
		return fmt.Errorf("-m2 %d does not go with -model svgp, which has no orthogonal inducing points (use -model odvgp or solvegp, or leave out -m2)", spec.m2)
	}
	return nil
}

// isFlagSet reports whether the command line set the flag name.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
