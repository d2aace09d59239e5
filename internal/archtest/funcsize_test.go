package archtest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	maxFuncLines  = 150
	maxFuncParams = 8
)

// generatedRE is the marker Go tools put in generated files
// (https://go.dev/s/generatedcode).
var generatedRE = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// moduleRoot returns the directory holding go.mod, two levels above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

// sourceFiles lists the module's hand-written, non-test Go files: it skips
// test files, generated files, testdata and hidden directories, and nested
// modules.
func sourceFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == root {
				return nil
			}
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generatedRE.Match(src) {
			return nil
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// funcViolations reports every function declaration or literal in src that
// spans more than maxFuncLines lines or takes more than maxFuncParams
// parameters.
// Functions listed in manyParams are allowed their parameters; the keys
// used are added to allowed.
func funcViolations(fset *token.FileSet, file *ast.File, rel string, allowed map[string]bool) []string {
	var out []string
	dir := filepath.ToSlash(filepath.Dir(rel))
	check := func(name string, typ *ast.FuncType, node ast.Node) {
		start := fset.Position(node.Pos())
		lines := fset.Position(node.End()).Line - start.Line + 1
		if lines > maxFuncLines {
			out = append(out, fmt.Sprintf("%s:%d: %s is %d lines long (limit %d)", rel, start.Line, name, lines, maxFuncLines))
		}
		if n := countFields(typ.Params); n > maxFuncParams && !isStub(node) {
			if key := dir + " " + name; manyParams[key] != "" {
				allowed[key] = true
				return
			}
			out = append(out, fmt.Sprintf("%s:%d: %s takes %d parameters (limit %d)", rel, start.Line, name, n, maxFuncParams))
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch f := n.(type) {
		case *ast.FuncDecl:
			check(funcName(f), f.Type, f)
		case *ast.FuncLit:
			check("function literal", f.Type, f)
		}
		return true
	})
	return out
}

// isStub reports whether node is an assembly stub (a declaration without
// body): its arguments are the frame its assembly reads, so it may take
// more than maxFuncParams parameters.
func isStub(node ast.Node) bool {
	f, ok := node.(*ast.FuncDecl)
	return ok && f.Body == nil
}

// Reasons a function may take more than maxFuncParams parameters.
const (
	// blasSignature: a BLAS or LAPACK routine with the reference calling
	// convention (gonum's blas.Float64 and lapack signatures), or a
	// reference implementation a benchmark compares it with.
	blasSignature = "BLAS/LAPACK signature"
	// blasArgs: a step of a BLAS-style routine that passes the routine's
	// own operands on (transposes, sizes, scalars, matrices and their
	// strides).
	blasArgs = "BLAS-style operand list"
	// kernelArgs: the pure-Go twin or Go dispatcher of an assembly kernel,
	// with the kernel's argument list, which the tests compare bit for bit.
	kernelArgs = "assembly kernel's argument list"
)

// manyParams lists, as "dir Func" (dir relative to the module root, Func
// as funcName gives it), the functions allowed more than maxFuncParams
// parameters, with the reason. TestFunctionSize also fails for an entry
// that no longer needs its exception, so the list only shrinks.
var manyParams = map[string]string{
	"bench/kernels noReference.dgemm":       blasSignature,
	"bench/kernels noReference.dsyrk":       blasSignature,
	"bench/kernels noReference.dtrsm":       blasSignature,
	"bench/kernels openblasReference.dgemm": blasSignature,
	"bench/kernels openblasReference.dsyrk": blasSignature,
	"bench/kernels openblasReference.dtrsm": blasSignature,
	"bench/openblas Dgemm":                  blasSignature,
	"bench/openblas Dsyrk":                  blasSignature,
	"bench/openblas Dtrsm":                  blasSignature,
	"blas Implementation.Dgemm":             blasSignature,
	"blas Implementation.gemmGonumSerial":   blasArgs,
	"blas gemmProblem.macroKernel":          blasArgs,
	"blas Implementation.Dgemmt":            blasSignature,
	"blas Implementation.DgemmTrapezoid":    blasSignature,
	"blas Implementation.Dsymm":             blasSignature,
	"blas Implementation.Dsyrk":             blasSignature,
	"blas Implementation.syrkDiag":          blasArgs,
	"blas Implementation.Dtrmm":             blasSignature,
	"blas Implementation.trmmLeft":          blasArgs,
	"blas Implementation.trmmRight":         blasArgs,
	"blas trmmLeftKernel":                   blasArgs,
	"blas trmmRightKernel":                  blasArgs,
	"blas Implementation.trmmLeftBlocked":   blasArgs,
	"blas Implementation.Dtrsm":             blasSignature,
	"blas trsmParallel":                     blasArgs,
	"blas Implementation.trsmLeft":          blasArgs,
	"blas Implementation.trsmRight":         blasArgs,
	"blas Implementation.trsmLeftFused":     blasArgs,
	"blas trsmLeftKernel":                   blasArgs,
	"blas trsmRightKernel":                  blasArgs,
	"blas trsmLeftSmall":                    blasArgs,
	"blas trsmRightSmall":                   blasArgs,
	"blas Implementation.trsmRightTiles":    blasArgs,
	"blas Implementation.trsmLeftTiles":     blasArgs,
	"chol adjoint":                          blasArgs,
	"chol Implementation.Dtrtrs":            blasSignature,
	"chol rowPassRun":                       blasArgs,
	"chol gemmtLower":                       blasArgs,
	"convgp gemm":                           blasArgs,
	"gp tileMul":                            blasArgs,
	"gp la.gemm":                            blasArgs,
	"gp la.gemmLowerNT":                     blasArgs,
	"gp la.syrkT":                           blasArgs,
	"gp la.gemv":                            blasArgs,
	"internal/gemm Reference":               kernelArgs,
	"internal/gemm Backend.TrsmTile":        kernelArgs,
	"internal/gemm Backend.TrsmTileNoCheck": kernelArgs,
	"internal/gemm trsmTileGo":              kernelArgs,
	"internal/gemm trsmAVX512":              kernelArgs,
	"internal/gemm trsmAVX2":                kernelArgs,
	"internal/gemm trsmNEON":                kernelArgs,
	"internal/vecmath kernelGradGeneric":    kernelArgs,
	"internal/vecmath RBFPairRow":           kernelArgs,
	"internal/vecmath rbfPairsGeneric":      kernelArgs,
	"internal/vecmath rbfPairsBlocked":      kernelArgs,
	"internal/vecmath rbfPairsKernel":       kernelArgs,
}

// countFields counts the parameters of a list, one per name (or one per
// unnamed field).
func countFields(fl *ast.FieldList) int {
	if fl == nil {
		return 0
	}
	n := 0
	for _, f := range fl.List {
		if len(f.Names) == 0 {
			n++
		} else {
			n += len(f.Names)
		}
	}
	return n
}

// funcName names a declaration as "Recv.Name" for methods and "Name" otherwise.
func funcName(f *ast.FuncDecl) string {
	if f.Recv == nil || len(f.Recv.List) == 0 {
		return f.Name.Name
	}
	var buf bytes.Buffer
	typ := f.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch r := typ.(type) {
	case *ast.Ident:
		buf.WriteString(r.Name)
	case *ast.IndexExpr:
		if id, ok := r.X.(*ast.Ident); ok {
			buf.WriteString(id.Name)
		}
	case *ast.IndexListExpr:
		if id, ok := r.X.(*ast.Ident); ok {
			buf.WriteString(id.Name)
		}
	}
	return buf.String() + "." + f.Name.Name
}

// TestFunctionSize fails for any hand-written function of the module longer
// than maxFuncLines lines or with more than maxFuncParams parameters: long
// functions and long parameter lists hide structure that deserves a name.
func TestFunctionSize(t *testing.T) {
	root := moduleRoot(t)
	files := sourceFiles(t, root)
	if len(files) == 0 {
		t.Fatal("no Go files found")
	}
	fset := token.NewFileSet()
	allowed := map[string]bool{}
	for _, path := range files {
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("parse %s: %v", path, err)
			continue
		}
		rel, _ := filepath.Rel(root, path)
		for _, v := range funcViolations(fset, file, filepath.ToSlash(rel), allowed) {
			t.Error(v)
		}
	}
	for key := range manyParams {
		if !allowed[key] {
			t.Errorf("manyParams[%q]: no such function takes more than %d parameters any more; remove the entry", key, maxFuncParams)
		}
	}
}

// TestFunctionSizeDetects checks that the limits fire on a long function and
// a long parameter list, so TestFunctionSize cannot pass vacuously.
func TestFunctionSizeDetects(t *testing.T) {
	var src strings.Builder
	src.WriteString("package p\nfunc many(a, b, c, d, e, f, g, h, i int) {}\nfunc stub(a, b, c, d, e, f, g, h, i int)\nfunc long() {\n")
	for i := 0; i < maxFuncLines; i++ {
		src.WriteString("\t_ = 0\n")
	}
	src.WriteString("}\nfunc ok(a, b, c, d, e, f, g, h int) {}\n")
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src.String(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := funcViolations(fset, file, "p.go", map[string]bool{})
	if len(got) != 2 || !strings.Contains(got[0], "many takes 9 parameters") || !strings.Contains(got[1], "long is 152 lines") {
		t.Errorf("violations = %q, want many (9 parameters) and long (152 lines)", got)
	}
	if !generatedRE.MatchString("// Code generated by asmgen. DO NOT EDIT.\n") {
		t.Error("generated-file marker not recognised")
	}
}
