package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// pointError names file in err, an error of prediction on the inputs of
// tab; a gp.PointError, which counts test points from 0, becomes
// file:line for the line the point was read from.
func pointError(file string, tab *inputTable, err error) error {
	var pe *gp.PointError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", file, err)
	}
	if pe.Point < 0 || pe.Point >= len(tab.Lines) {
		return fmt.Errorf("%s: %w", file, err)
	}
	msg := fmt.Sprintf("%s is %g", pe.What, pe.Value)
	if pe.Hint != "" {
		msg += " (" + pe.Hint + ")"
	}
	return &data.ParseError{File: file, Line: tab.Lines[pe.Point], Msg: msg}
}

// warnUnchecked warns that the model file at path is of an older format
// whose checksum does not cover everything that affects a prediction
// (modelfile.Bundle.Unchecked); the model is used all the same.
func warnUnchecked(stderr io.Writer, cmd, path string, b *modelfile.Bundle) {
	if b.Unchecked != "" {
		fmt.Fprintf(stderr, "solvegp %s: warning: %s: %s\n", cmd, path, b.Unchecked)
	}
}
