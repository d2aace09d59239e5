package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const modulePath = "github.com/solvegp/solvegp"

// A layer of docs/architecture.md, lowest first: a package imports only
// packages of its own layer or of layers below it.
type layer int

const (
	support  layer = iota // internal helpers
	kernels               // SIMD kernels
	linalg                // dense linear algebra, im2col
	model                 // the SVGP / ODVGP / SOLVE-GP layer
	around                // optimizers, bounds, initialization, evaluation, files
	image                 // convolutional models
	programs              // commands, benchmarks, fuzz targets
)

var layerNames = [...]string{"support", "kernels", "linear algebra", "model", "around the model", "image models", "programs"}

func (l layer) String() string { return layerNames[l] }

// layers places every package of the module (relative import path) in its
// layer of docs/architecture.md. A path ending in "/..." covers the
// packages under it. A package missing here fails TestImportRule, so a new
// package has to be placed (and docs/architecture.md updated).
var layers = map[string]layer{
	"internal/parallel":   support,
	"internal/atomicfile": support,
	"internal/floats":     support,
	"internal/nilcheck":   support,
	"internal/randstate":  support,
	"internal/peak":       support,
	"internal/figure":     support,
	"internal/archtest":   support,

	"internal/gemm":    kernels,
	"internal/vecmath": kernels,
	"internal/asmgen":  kernels,

	"blas":    linalg,
	"chol":    linalg,
	"patches": linalg,

	"gp":            model,
	"gp/kernel":     model,
	"gp/likelihood": model,
	"gp/transform":  model,
	"gp/mean":       model,

	"gp/train":            around,
	"gp/train/checkpoint": around,
	"gp/collapsed":        around,
	"gp/exact":            around,
	"gp/inducing":         around,
	"gp/metrics":          around,
	"gp/modelfile":        around,
	"gp/data":             around,
	"gp/data/snelson":     around,
	"gp/stability":        around,

	"convgp":         image,
	"convgp/dataset": image,

	"cmd/solvegp": programs,
	"bench/...":   programs,
	"fuzz":        programs,
}

// layerOf returns the layer of a module package (relative path).
func layerOf(rel string) (layer, bool) {
	if l, ok := layers[rel]; ok {
		return l, true
	}
	for pat, l := range layers {
		if prefix, ok := strings.CutSuffix(pat, "/..."); ok && strings.HasPrefix(rel, prefix+"/") {
			return l, true
		}
	}
	return 0, false
}

// listedPackage is the part of `go list -json` output the rule needs.
type listedPackage struct {
	ImportPath   string
	Module       *struct{ Path string }
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// modulePackages decodes `go list -json` output and keeps the module's
// packages, with import paths made relative to the module.
func modulePackages(r io.Reader) ([]listedPackage, error) {
	var pkgs []listedPackage
	dec := json.NewDecoder(r)
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Module == nil || p.Module.Path != modulePath {
			continue
		}
		p.ImportPath = relPath(p.ImportPath)
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].ImportPath < pkgs[j].ImportPath })
	return pkgs, nil
}

// relPath returns the module-relative path of a module package, or "" for
// a package of another module or the standard library.
func relPath(path string) string {
	if path == modulePath {
		return "."
	}
	if rel, ok := strings.CutPrefix(path, modulePath+"/"); ok {
		return rel
	}
	return ""
}

// importViolations checks the import rule of docs/architecture.md on the
// module's packages and returns one message per offending import.
func importViolations(pkgs []listedPackage) []string {
	var out []string
	for _, p := range pkgs {
		from, ok := layerOf(p.ImportPath)
		if !ok {
			out = append(out, fmt.Sprintf("package %s has no layer: place it in docs/architecture.md and in internal/archtest's layers", p.ImportPath))
			continue
		}
		for _, imp := range p.Imports {
			out = append(out, checkImport(p.ImportPath, from, relPath(imp), false)...)
		}
		for _, imp := range append(append([]string(nil), p.TestImports...), p.XTestImports...) {
			out = append(out, checkImport(p.ImportPath, from, relPath(imp), true)...)
		}
	}
	return out
}

// checkImport checks one import of package from (in layer fromLayer) of
// module package to ("" for other modules). Tests may import upward (a
// model's tests train it), but rules 2 and 3 and the ban on importing
// programs hold for them too.
func checkImport(from string, fromLayer layer, to string, test bool) []string {
	if to == "" || to == from {
		return nil
	}
	kind := "imports"
	if test {
		kind = "imports in its tests"
	}
	toLayer, ok := layerOf(to)
	if !ok {
		return []string{fmt.Sprintf("%s %s %s, which has no layer in docs/architecture.md", from, kind, to)}
	}
	var out []string
	bad := func(rule int, why string) {
		out = append(out, fmt.Sprintf("docs/architecture.md import rule %d: %s %s %s: %s", rule, from, kind, to, why))
	}
	isProgram := func(p string) bool {
		return p == "cmd" || strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "bench/")
	}
	switch {
	case isProgram(to) && !(strings.HasPrefix(from, "bench/") && strings.HasPrefix(to, "bench/internal/")):
		bad(1, "nothing imports cmd/ or bench/ (bench's own internal helpers excepted)")
	case !test && toLayer > fromLayer:
		bad(1, fmt.Sprintf("%s (layer %q) is above %s (layer %q); imports run one way, downward", to, toLayer, from, fromLayer))
	case !test && from == "blas" && to == "chol":
		bad(1, "imports run blas → chol, not back")
	}
	if to == "internal/gemm" && from != "blas" && from != "chol" && !strings.HasPrefix(from, "internal/gemm") {
		bad(2, "internal/gemm is imported only by blas and chol; call blas (its packed-operand API for packed products)")
	}
	if to == "internal/vecmath" && fromLayer == programs {
		bad(3, "internal/vecmath is never imported by the programs")
	}
	if !test && fromLayer <= kernels && toLayer > kernels {
		bad(5, "internal packages import no package of the module above them")
	}
	return out
}

// TestImportRule runs `go list -deps -json ./...` and checks every import
// between the module's packages against the layers and the import rule of
// docs/architecture.md.
func TestImportRule(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs, err := modulePackages(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("decoding go list output: %v", err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages of %s; expected the whole module", len(pkgs), modulePath)
	}
	for _, v := range importViolations(pkgs) {
		t.Error(v)
	}
}

// TestImportRuleDetects feeds importViolations a package graph with one
// violation of each rule, so that TestImportRule cannot pass vacuously.
func TestImportRuleDetects(t *testing.T) {
	m := func(rel string) string { return modulePath + "/" + rel }
	pkgs := []listedPackage{
		{ImportPath: "gp", Imports: []string{m("gp/train"), m("blas"), "fmt"}},
		{ImportPath: "convgp", Imports: []string{m("internal/gemm"), m("internal/vecmath")}},
		{ImportPath: "fuzz", XTestImports: []string{m("internal/vecmath"), m("gp/train")}},
		{ImportPath: "internal/figure", Imports: []string{m("gp")}},
		{ImportPath: "blas", Imports: []string{m("chol"), m("internal/gemm")}},
		{ImportPath: "gp/metrics", TestImports: []string{m("cmd/solvegp")}},
		{ImportPath: "bench/snelson", Imports: []string{m("bench/internal/benchutil")}},
		{ImportPath: "newpkg"},
	}
	got := strings.Join(importViolations(pkgs), "\n")
	for _, want := range []string{
		"rule 1: gp imports gp/train",
		"rule 2: convgp imports internal/gemm",
		"rule 3: fuzz imports in its tests internal/vecmath",
		"rule 5: internal/figure imports gp",
		"rule 1: blas imports chol",
		"rule 1: gp/metrics imports in its tests cmd/solvegp",
		"package newpkg has no layer",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("violations lack %q; got:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"gp imports " + "blas", "convgp imports internal/vecmath", "fuzz imports in its tests gp/train", "benchutil", "blas imports internal/gemm"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("violations name the allowed import %q; got:\n%s", unwanted, got)
		}
	}
	if n := len(importViolations(pkgs)); n != 8 {
		t.Errorf("%d violations, want 8 (rule 1 and rule 5 both for internal/figure → gp):\n%s", n, got)
	}
}
