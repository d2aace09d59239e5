package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/solvegp/solvegp/bench/internal/benchutil"
)

// sparseRecord is the part of a bench/regression record the report reads.
type sparseRecord struct {
	Dataset    string  `json:"dataset"`
	Model      string  `json:"model"`
	Split      int     `json:"split"`
	TestLogLik float64 `json:"test_log_lik"`
	TestRMSE   float64 `json:"test_rmse"`
}

// gapBase is the sparse model whose distance to the exact GP the others
// are measured against, and gapModels those others, in table order.
const gapBase = "SVGP 1024"

var gapModels = []string{"SVGP 2048", "SOLVE-GP 1024+1024", "SOLVE-GP/tighter 1024+1024"}

// report writes the markdown table of the exact GP results (the *.json
// files of dir) next to the sparse models of the regression log on the same
// split: test log-likelihood (standardized targets) and, for each sparse
// model, the fraction of the gap between SVGP 1024 and the exact GP that it
// closes.
func report(dir, regression string, w io.Writer) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	var runs []result
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r result
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return fmt.Errorf("no exact GP results (*.json) in %s", dir)
	}
	slices.SortFunc(runs, func(a, b result) int {
		if a.NTrain != b.NTrain {
			return a.NTrain - b.NTrain
		}
		return strings.Compare(a.Kernel, b.Kernel)
	})
	sparse, _, err := benchutil.ReadJSONL[sparseRecord](regression)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "| data set | kernel | split | N | L-BFGS: pretraining rows, iterations + full-data iterations | log marginal | s/evaluation with gradient / value only | exact test LL | exact RMSE | "+gapBase+" LL | "+strings.Join(gapModels, " LL (gap closed) | ")+" LL (gap closed) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|---:|---:|---:|---:|---:|"+strings.Repeat("---:|", len(gapModels)))
	for _, r := range runs {
		fmt.Fprintln(w, reportRow(r, sparse))
	}
	return nil
}

// reportRow formats one exact GP run and the sparse models of its split.
func reportRow(r result, sparse []sparseRecord) string {
	ll := func(model string) float64 {
		for _, s := range sparse {
			if s.Dataset == r.Data && s.Split == r.Split && s.Model == model {
				return s.TestLogLik
			}
		}
		return math.NaN()
	}
	fit := fmt.Sprintf("none + %d", r.Iterations)
	if p := r.Pretrain; p != nil {
		fit = fmt.Sprintf("%d, %d + %d", p.N, p.Iterations, r.Iterations)
	}
	base := ll(gapBase)
	row := fmt.Sprintf("| %s | %s | %d | %d | %s | %.1f | %.1f / %.1f | %.3f | %.3f | %s |", r.Data, r.Kernel, r.Split, r.NTrain, fit,
		r.LML, r.SecPerEval, r.SecValueOnly, r.TestLogLikStd, r.TestRMSEStd, cell(base, math.NaN()))
	for _, m := range gapModels {
		v := ll(m)
		row += " " + cell(v, (v-base)/(r.TestLogLikStd-base)) + " |"
	}
	return row
}

// cell formats a test log-likelihood and, when known, the fraction of the
// gap it closes.
func cell(v, frac float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsNaN(frac) || math.IsInf(frac, 0):
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.3f (%.0f%%)", v, 100*frac)
}
