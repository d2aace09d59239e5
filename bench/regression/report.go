package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/solvegp/solvegp/bench/internal/benchutil"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

// Cell summarizes the runs of one model on one data set.
type Cell struct {
	Dataset    string            `json:"dataset"`
	Model      string            `json:"model"`
	NTrain     int               `json:"n_train"`
	D          int               `json:"d"`
	Splits     []int             `json:"splits"`
	TestLogLik benchutil.Summary `json:"test_log_lik"`
	TestRMSE   benchutil.Summary `json:"test_rmse"`
	SecPerIter benchutil.Summary `json:"sec_per_iter"`
	// Paper holds the paper's numbers for this cell, if it has them.
	Paper *paperCell `json:"paper,omitempty"`
	// WithinLL and WithinRMSE report whether our mean is within two
	// standard errors of the paper's, or better (nil without a paper
	// value).
	WithinLL   *bool `json:"within_2se_or_better_log_lik,omitempty"`
	WithinRMSE *bool `json:"within_2se_or_better_rmse,omitempty"`
}

// Table holds the cells of one setup.
type Table struct {
	Setup    Setup    `json:"setup"`
	Datasets []string `json:"datasets"`
	Models   []string `json:"models"`
	Cells    []Cell   `json:"cells"`
}

// Report is the content of regression.json.
type Report struct {
	Generated time.Time `json:"generated"`
	Source    string    `json:"source"`
	Tables    []Table   `json:"tables"`
}

// datasetOrder sorts data sets as in the paper (elevators and bike first,
// as in the appendix table, then Tables 2 and 5), unknown ones after.
func datasetOrder(name string) int {
	order := []string{"elevators", "bike", "kin40k", "protein", "keggdirected", "keggundirected"}
	for i, n := range order {
		if n == name {
			return i
		}
	}
	for i, n := range data.UCIDatasets() {
		if n == name {
			return len(order) + i
		}
	}
	return 1 << 20
}

// modelKey is the sort key of a row label: the paper's row index (its
// rows first, in its order; len(defaultModels) for other sizes), then kind,
// M, M2 and the natural-gradient step (Adam, 0, first), so that every
// natural-gradient row sits right after its Adam row. Labels that do not
// parse sort last, by name.
type modelKey struct {
	paper, kind, m, m2 int
	natural            float64
	tighter, bad       bool
	label              string
}

var labelRE = regexp.MustCompile(`^(SVGP|ODVGP|SOLVE-GP)(?:\+NG\(([0-9.eE+-]+)\))?(/tighter)? ([0-9]+)(?:\+([0-9]+))?$`)

func modelKeyOf(label string) modelKey {
	k := modelKey{paper: len(defaultModels), label: label}
	sm := labelRE.FindStringSubmatch(label)
	if sm == nil {
		k.bad = true
		return k
	}
	k.kind = map[string]int{"SVGP": 0, "ODVGP": 1, "SOLVE-GP": 2}[sm[1]]
	k.tighter = sm[3] != ""
	k.m, _ = strconv.Atoi(sm[4])
	k.m2, _ = strconv.Atoi(sm[5])
	if sm[2] != "" {
		k.natural, _ = strconv.ParseFloat(sm[2], 64)
	}
	base := sm[1] + " " + sm[4]
	if sm[5] != "" {
		base += "+" + sm[5]
	}
	for i, n := range defaultModels {
		if s, _ := parseModel(n); s.Label() == base {
			k.paper = i
		}
	}
	return k
}

// modelLess orders the rows of a table (see modelKey).
func modelLess(a, b string) bool {
	ka, kb := modelKeyOf(a), modelKeyOf(b)
	switch {
	case ka.bad != kb.bad:
		return kb.bad
	case ka.bad:
		return ka.label < kb.label
	case ka.paper != kb.paper:
		return ka.paper < kb.paper
	case ka.kind != kb.kind:
		return ka.kind < kb.kind
	case ka.m != kb.m:
		return ka.m < kb.m
	case ka.m2 != kb.m2:
		return ka.m2 < kb.m2
	case ka.tighter != kb.tighter:
		return kb.tighter
	}
	return ka.natural < kb.natural
}

// within reports whether ours is within two standard errors of the paper's
// value or better (higher if higherBetter). The standard error combines
// ours (when known) and the paper's.
func within(ours benchutil.Summary, paper paperValue, higherBetter bool) bool {
	se2 := paper.SE * paper.SE
	if ours.N > 1 && !math.IsNaN(ours.SE) {
		se2 += ours.SE * ours.SE
	}
	tol := 2 * math.Sqrt(se2)
	if higherBetter {
		return ours.Mean >= paper.Mean-tol
	}
	return ours.Mean <= paper.Mean+tol
}

// buildReport aggregates the records by setup, data set and model.
func buildReport(recs []Record) Report {
	type cellKey struct{ setup, dataset, model string }
	bySetup := map[string]*Table{}
	var setupOrder []string
	vals := map[cellKey]*[3][]float64{}
	cells := map[cellKey]*Cell{}
	for _, r := range recs {
		sk := fmt.Sprintf("%+v", r.Setup)
		t := bySetup[sk]
		if t == nil {
			t = &Table{Setup: r.Setup}
			bySetup[sk] = t
			setupOrder = append(setupOrder, sk)
		}
		ck := cellKey{sk, r.Dataset, r.Model}
		c := cells[ck]
		if c == nil {
			c = &Cell{Dataset: r.Dataset, Model: r.Model, NTrain: r.NTrain, D: r.D}
			cells[ck] = c
			vals[ck] = &[3][]float64{}
			if !contains(t.Datasets, r.Dataset) {
				t.Datasets = append(t.Datasets, r.Dataset)
			}
			if !contains(t.Models, r.Model) {
				t.Models = append(t.Models, r.Model)
			}
		}
		if contains2(c.Splits, r.Split) {
			continue // a duplicate (the log was appended to twice): keep the first
		}
		c.Splits = append(c.Splits, r.Split)
		v := vals[ck]
		v[0] = append(v[0], r.TestLogLik)
		v[1] = append(v[1], r.TestRMSE)
		v[2] = append(v[2], r.SecPerIter)
	}
	rep := Report{Generated: time.Now().UTC()}
	for _, sk := range setupOrder {
		t := bySetup[sk]
		sort.SliceStable(t.Datasets, func(i, j int) bool { return datasetOrder(t.Datasets[i]) < datasetOrder(t.Datasets[j]) })
		sort.SliceStable(t.Models, func(i, j int) bool { return modelLess(t.Models[i], t.Models[j]) })
		for _, ds := range t.Datasets {
			for _, m := range t.Models {
				ck := cellKey{sk, ds, m}
				c := cells[ck]
				if c == nil {
					continue
				}
				v := vals[ck]
				sort.Ints(c.Splits)
				c.TestLogLik, c.TestRMSE, c.SecPerIter = benchutil.Summarize(v[0]), benchutil.Summarize(v[1]), benchutil.Summarize(v[2])
				if p, ok := paperResults[m][ds]; ok {
					pc := p
					c.Paper = &pc
					ll, rm := within(c.TestLogLik, p.LL, true), within(c.TestRMSE, p.RMSE, false)
					c.WithinLL, c.WithinRMSE = &ll, &rm
				}
				t.Cells = append(t.Cells, *c)
			}
		}
		rep.Tables = append(rep.Tables, *t)
	}
	return rep
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func contains2(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (t *Table) cell(ds, m string) *Cell {
	for i := range t.Cells {
		if t.Cells[i].Dataset == ds && t.Cells[i].Model == m {
			return &t.Cells[i]
		}
	}
	return nil
}

// markdown formats the report in the layout of the paper's tables: one
// row per model, one column per data set, "mean ± standard error" over
// splits, followed by a comparison with the paper's numbers.
func markdown(rep Report) string {
	var b strings.Builder
	b.WriteString("# UCI regression benchmarks (Tables 2, 5 and 6 of the SOLVE-GP paper)\n\n")
	fmt.Fprintf(&b, "Generated %s from %s by `go run ./bench/regression -report`. Test metrics are on standardized targets; "+
		"cells are mean ± standard error over the splits (n = number of splits when only one finished).\n",
		rep.Generated.Format(time.RFC3339), rep.Source)
	if len(rep.Tables) == 0 {
		b.WriteString("\nNo finished runs yet.\n")
	}
	for _, t := range rep.Tables {
		fmt.Fprintf(&b, "\n## %s\n", t.Setup)
		metric := func(title string, get func(*Cell) benchutil.Summary, prec int) {
			fmt.Fprintf(&b, "\n### %s\n\n| | |", title)
			for _, ds := range t.Datasets {
				fmt.Fprintf(&b, " %s |", ds)
			}
			b.WriteString("\n|---|---|")
			b.WriteString(strings.Repeat("---:|", len(t.Datasets)))
			b.WriteString("\n| | N (train) |")
			for _, ds := range t.Datasets {
				n := 0
				for _, c := range t.Cells {
					if c.Dataset == ds {
						n = c.NTrain
						break
					}
				}
				fmt.Fprintf(&b, " %d |", n)
			}
			b.WriteString("\n| | N (paper) |")
			for _, ds := range t.Datasets {
				if n, ok := paperN[ds]; ok {
					fmt.Fprintf(&b, " %d |", n)
				} else {
					b.WriteString(" — |")
				}
			}
			b.WriteString("\n| | d |")
			for _, ds := range t.Datasets {
				d := 0
				for _, c := range t.Cells {
					if c.Dataset == ds {
						d = c.D
						break
					}
				}
				fmt.Fprintf(&b, " %d |", d)
			}
			b.WriteString("\n")
			for _, m := range t.Models {
				name, size, _ := strings.Cut(m, " ")
				fmt.Fprintf(&b, "| %s | %s |", name, size)
				for _, ds := range t.Datasets {
					c := t.cell(ds, m)
					if c == nil {
						b.WriteString(" — |")
						continue
					}
					fmt.Fprintf(&b, " %s |", get(c).Format(prec))
				}
				b.WriteString("\n")
			}
		}
		metric("Test log-likelihood", func(c *Cell) benchutil.Summary { return c.TestLogLik }, 3)
		metric("Test RMSE", func(c *Cell) benchutil.Summary { return c.TestRMSE }, 3)
		metric("Seconds per iteration", func(c *Cell) benchutil.Summary { return c.SecPerIter }, 3)

		b.WriteString("\n### Against the paper\n\n" +
			"\"ok\": our mean is within two standard errors of the paper's (ours and the paper's combined; the paper's alone for one split), or better.\n\n" +
			"| data set | model | splits | test LL | paper LL | | test RMSE | paper RMSE | |\n|---|---|---:|---:|---:|---|---:|---:|---|\n")
		for _, ds := range t.Datasets {
			for _, m := range t.Models {
				c := t.cell(ds, m)
				if c == nil || c.Paper == nil {
					continue
				}
				fmt.Fprintf(&b, "| %s | %s | %d | %s | %.3f ± %.3f | %s | %s | %.3f ± %.3f | %s |\n", ds, m, len(c.Splits),
					c.TestLogLik.Format(3), c.Paper.LL.Mean, c.Paper.LL.SE, okMark(*c.WithinLL),
					c.TestRMSE.Format(3), c.Paper.RMSE.Mean, c.Paper.RMSE.SE, okMark(*c.WithinRMSE))
			}
		}
	}
	return b.String()
}

func okMark(ok bool) string {
	if ok {
		return "ok"
	}
	return "**outside**"
}

// writeReport regenerates regression.md and regression.json from the log
// in dir and prints the Markdown to w. When the files already hold these
// tables (they differ at most in their "generated" timestamp, as after a
// rerun that ran nothing new), they are left as they are, timestamp
// included, so that a rerun does not touch committed results.
func writeReport(dir string, w io.Writer) error {
	path := logPath(dir)
	recs, _, err := benchutil.ReadJSONL[Record](path)
	if err != nil {
		return err
	}
	rep := buildReport(recs)
	rep.Source = filepath.Base(path)
	jsPath, mdPath := filepath.Join(dir, "regression.json"), filepath.Join(dir, "regression.md")
	if oldJS, err := os.ReadFile(jsPath); err == nil {
		var prev struct {
			Generated time.Time `json:"generated"`
		}
		if oldMD, err := os.ReadFile(mdPath); err == nil && json.Unmarshal(oldJS, &prev) == nil {
			same := rep
			same.Generated = prev.Generated
			if md, js, err := renderReport(same); err == nil && md == string(oldMD) && bytes.Equal(js, oldJS) {
				_, err = io.WriteString(w, md)
				return err
			}
		}
	}
	md, js, err := renderReport(rep)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(jsPath, js, 0o644); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(mdPath, []byte(md), 0o644); err != nil {
		return err
	}
	_, err = io.WriteString(w, md)
	return err
}

// renderReport returns the contents of regression.md and regression.json.
func renderReport(rep Report) (md string, js []byte, err error) {
	js, err = json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", nil, err
	}
	return markdown(rep), append(js, '\n'), nil
}
