package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func writeFile(t *testing.T, name, content string, gz bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	var b []byte
	if gz {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(content))
		zw.Close()
		b = buf.Bytes()
	} else {
		b = []byte(content)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadCSVPlainAndGzip(t *testing.T) {
	const content = "a,b,y\n1,2,3\n4, 5,6\n\n7,8,9e-1\n"
	for _, gz := range []bool{false, true} {
		// A misleading extension: detection is by content.
		path := writeFile(t, "d.csv", content, gz)
		tab, err := LoadCSV(path, Options{})
		if err != nil {
			t.Fatalf("gz=%v: %v", gz, err)
		}
		want := mat.NewDense(3, 2, []float64{1, 2, 4, 5, 7, 8})
		if !mat.Equal(tab.X, want) {
			t.Errorf("gz=%v: X = %v", gz, mat.Formatted(tab.X))
		}
		if got := tab.Y; len(got) != 3 || got[0] != 3 || got[1] != 6 || got[2] != 0.9 {
			t.Errorf("gz=%v: Y = %v", gz, got)
		}
		if strings.Join(tab.Names, ",") != "a,b,y" {
			t.Errorf("gz=%v: names = %v", gz, tab.Names)
		}
	}
}

func TestReadCSVHeaderModesAndTarget(t *testing.T) {
	const noHeader = "1,2,3\n4,5,6\n"
	tab, err := ReadCSV(strings.NewReader(noHeader), "x.csv", Options{Target: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Names != nil || !mat.Equal(tab.X, mat.NewDense(2, 2, []float64{2, 3, 5, 6})) || tab.Y[0] != 1 || tab.Y[1] != 4 {
		t.Errorf("target 1: X=%v Y=%v names=%v", mat.Formatted(tab.X), tab.Y, tab.Names)
	}
	tab, err = ReadCSV(strings.NewReader(noHeader), "x.csv", Options{Header: HeaderPresent, Target: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := tab.X.Dims(); r != 1 || tab.Y[0] != 5 || tab.Names[2] != "2" || tab.Names[0] != "1" {
		t.Errorf("forced header: X=%v Y=%v names=%v", mat.Formatted(tab.X), tab.Y, tab.Names)
	}
	tab, err = ReadCSV(strings.NewReader("x,y\n1,2\n"), "x.csv", Options{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Y != nil || !mat.Equal(tab.X, mat.NewDense(1, 2, []float64{1, 2})) {
		t.Errorf("no target: %v %v", mat.Formatted(tab.X), tab.Y)
	}
	// A single column is fine without a target.
	tab, err = ReadCSV(strings.NewReader("x\n1\n2\n"), "x.csv", Options{NoTarget: true})
	if err != nil || tab.X.RawMatrix().Rows != 2 {
		t.Errorf("single column: %v", err)
	}
}

func TestReadCSVErrors(t *testing.T) {
	cases := []struct {
		name    string
		content string
		opts    Options
		line    int
		col     int
		msg     string
	}{
		{"empty", "", Options{}, 0, 0, "empty file"},
		{"blank", "\n\n", Options{}, 0, 0, "empty file"},
		{"header only", "a,b\n", Options{}, 0, 0, "no data rows"},
		{"ragged short", "a,b,c\n1,2,3\n4,5\n", Options{}, 3, 3, "ragged row: 2 fields, want 3"},
		{"ragged long", "1,2\n3,4,5\n", Options{}, 2, 3, "ragged row: 3 fields, want 2"},
		{"not a number", "a,b\n1,2\n3,x7\n", Options{}, 3, 2, `not a number: "x7"`},
		{"empty field", "a,b\n1,\n", Options{}, 2, 2, `not a number: ""`},
		{"nan", "a,b\n1,2\nNaN,3\n", Options{}, 3, 1, "non-finite"},
		{"inf", "1,2\n3,-Inf\n", Options{}, 2, 2, "non-finite"},
		{"nan first line", "nan,1\n", Options{}, 1, 1, "non-finite"},
		{"overflow", "1,2\n1e999,3\n", Options{}, 2, 1, "out of float64 range"},
		{"target out of range", "1,2\n", Options{Target: 3}, 0, 0, "target column 3 out of range: the file has 2 columns"},
		{"negative target", "1,2\n", Options{Target: -1}, 0, 0, "target column -1 out of range"},
		{"one column", "y\n1\n", Options{}, 0, 0, "need at least 2 columns"},
		{"bad quote", "a,b\n1,\"2\n", Options{}, 2, 0, "malformed CSV"},
		{"forced header only", "1,2\n", Options{Header: HeaderPresent}, 0, 0, "no data rows"},
	}
	for _, c := range cases {
		_, err := ReadCSV(strings.NewReader(c.content), "in.csv", c.opts)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v is not a *ParseError", c.name, err)
			continue
		}
		if pe.File != "in.csv" || pe.Line != c.line || (c.col != 0 && pe.Column != c.col) || !strings.Contains(pe.Error(), c.msg) {
			t.Errorf("%s: got %q (line %d col %d), want line %d col %d containing %q", c.name, pe.Error(), pe.Line, pe.Column, c.line, c.col, c.msg)
		}
		if c.line > 0 && !strings.HasPrefix(pe.Error(), "in.csv:") {
			t.Errorf("%s: message %q does not start with the file name", c.name, pe.Error())
		}
	}
	if _, err := ReadCSV(strings.NewReader("1,2\n"), "in.csv", Options{Header: 7}); err == nil {
		t.Error("bad header mode accepted")
	}
	// A corrupt gzip stream (right magic, garbage after).
	if _, err := ReadCSV(bytes.NewReader([]byte{0x1f, 0x8b, 1, 2, 3}), "z.gz", Options{}); err == nil || !strings.Contains(err.Error(), "z.gz") {
		t.Errorf("corrupt gzip: %v", err)
	}
	if _, err := LoadCSV(filepath.Join(t.TempDir(), "missing.csv"), Options{}); err == nil {
		t.Error("missing file accepted")
	}
}

func TestReadCSVByteOrderMarkAndCRLF(t *testing.T) {
	for _, in := range []string{"\ufeff1,2\r\n3,4\r\n", "\ufeffa,b\r\n1,2\r\n3,4\r\n"} {
		tab, err := ReadCSV(strings.NewReader(in), "bom.csv", Options{})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if r, _ := tab.X.Dims(); r != 2 || tab.Y[1] != 4 {
			t.Errorf("%q: X %v Y %v", in, mat.Formatted(tab.X), tab.Y)
		}
		if tab.Names != nil && tab.Names[0] != "a" {
			t.Errorf("%q: names %q", in, tab.Names)
		}
	}
}

func TestErrorMessageFormat(t *testing.T) {
	_, err := ReadCSV(strings.NewReader("a,b\n1,2\n3,zz\n"), "train.csv", Options{})
	if got, want := err.Error(), `train.csv:3:2: not a number: "zz"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStandardizer(t *testing.T) {
	// Column 2 is constant (non-zero), column 3 is constant zero.
	x := mat.NewDense(4, 3, []float64{
		1, 0.1, 0,
		2, 0.1, 0,
		3, 0.1, 0,
		4, 0.1, 0,
	})
	y := []float64{10, 20, 30, 40}
	s, err := FitStandardizer(x, y)
	if err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(1.25)
	if s.XMean[0] != 2.5 || math.Abs(s.XScale[0]-sd) > 1e-15 || s.XScale[1] != 1 || s.XScale[2] != 1 {
		t.Errorf("x stats: %v %v", s.XMean, s.XScale)
	}
	if s.YMean != 25 || math.Abs(s.YScale-10*sd) > 1e-13 {
		t.Errorf("y stats: %v %v", s.YMean, s.YScale)
	}
	xt := mat.DenseCopyOf(x)
	if err := s.TransformX(xt); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if v := xt.At(i, 1); math.Abs(v) > 1e-16 {
			t.Errorf("constant column not centred: %v", v)
		}
		if v := xt.At(i, 2); v != 0 {
			t.Errorf("zero column changed: %v", v)
		}
	}
	// Standardized columns have mean 0 and variance 1.
	var m, v float64
	for i := 0; i < 4; i++ {
		m += xt.At(i, 0)
	}
	for i := 0; i < 4; i++ {
		v += xt.At(i, 0) * xt.At(i, 0)
	}
	if math.Abs(m) > 1e-15 || math.Abs(v/4-1) > 1e-15 {
		t.Errorf("standardized column: mean %v var %v", m/4, v/4)
	}
	if err := s.InverseX(xt); err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(xt, x, 1e-15) {
		t.Errorf("InverseX round trip: %v", mat.Formatted(xt))
	}
	yt := append([]float64(nil), y...)
	s.TransformY(yt)
	variance := []float64{1, 2, 3, 4}
	s.InverseY(yt, variance)
	for i := range y {
		if math.Abs(yt[i]-y[i]) > 1e-13 {
			t.Errorf("InverseY mean %d: %v want %v", i, yt[i], y[i])
		}
		want := float64(i+1) * s.YScale * s.YScale
		if math.Abs(variance[i]-want) > 1e-12*want {
			t.Errorf("InverseY var %d: %v want %v", i, variance[i], want)
		}
	}
	if got := s.LogDensityOffset(); math.Abs(got+math.Log(s.YScale)) > 1e-15 {
		t.Errorf("offset %v", got)
	}
	if err := s.TransformX(mat.NewDense(1, 2, nil)); err == nil {
		t.Error("wrong column count accepted")
	}
	if _, err := FitStandardizer(x, y[:2]); err == nil {
		t.Error("length mismatch accepted")
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(2, 0, math.Inf(1))
	if _, err := FitStandardizer(bad, nil); err == nil {
		t.Error("Inf accepted")
	}
	s2, err := FitStandardizer(x, nil)
	if err != nil || s2.YScale != 1 || s2.YMean != 0 {
		t.Errorf("nil y: %v %+v", err, s2)
	}
}

// TestStandardizerInvalid checks that a hand-built Standardizer with a
// zero, negative or non-finite scale or a non-finite mean is refused with
// an error (TransformX, InverseX, Validate) or a panic naming the problem
// (the target methods, which return no error), never turned into NaN.
func TestStandardizerInvalid(t *testing.T) {
	good := func() *Standardizer {
		return &Standardizer{XMean: []float64{1, 2}, XScale: []float64{3, 4}, YMean: 5, YScale: 6}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	panics := func(f func()) (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg = fmt.Sprint(r)
			}
		}()
		f()
		return ""
	}
	// Nil inputs and a nil receiver.
	var nilS *Standardizer
	for name, f := range map[string]func() error{
		"TransformX(nil)":     func() error { return good().TransformX(nil) },
		"InverseX(nil)":       func() error { return good().InverseX(nil) },
		"nil.TransformX(x)":   func() error { return nilS.TransformX(x) },
		"nil.Validate()":      func() error { return nilS.Validate() },
		"3 means, 2 scales":   func() error { s := good(); s.XMean = append(s.XMean, 0); return s.Validate() },
		"zero value Validate": func() error { return (&Standardizer{}).Validate() },
	} {
		var err error
		if msg := panics(func() { err = f() }); msg != "" {
			t.Errorf("%s: panic %s", name, msg)
		} else if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for _, v := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		s := good()
		s.XScale[1] = v
		xc := mat.DenseCopyOf(x)
		if err := s.TransformX(xc); err == nil || !strings.Contains(err.Error(), "input column 2") {
			t.Errorf("TransformX with scale %v: %v", v, err)
		}
		if err := s.InverseX(xc); err == nil {
			t.Errorf("InverseX with scale %v: no error", v)
		}
		if !mat.Equal(xc, x) {
			t.Errorf("scale %v: x changed to %v", v, xc.RawMatrix().Data)
		}
		if err := s.Validate(); err == nil {
			t.Errorf("Validate with input scale %v: no error", v)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(-1)} {
		s := good()
		s.XMean[0] = v
		if err := s.TransformX(mat.DenseCopyOf(x)); err == nil || !strings.Contains(err.Error(), "input column 1") {
			t.Errorf("TransformX with mean %v: %v", v, err)
		}
	}
	// The target methods cannot return an error: they panic.
	for _, spoil := range []func(s *Standardizer){
		func(s *Standardizer) { s.YScale = 0 },
		func(s *Standardizer) { s.YScale = -2 },
		func(s *Standardizer) { s.YScale = math.NaN() },
		func(s *Standardizer) { s.YScale = math.Inf(1) },
		func(s *Standardizer) { s.YMean = math.NaN() },
		func(s *Standardizer) { *s = Standardizer{} },
	} {
		s := good()
		spoil(s)
		if err := s.Validate(); err == nil {
			t.Errorf("Validate(%+v): no error", *s)
		}
		// The input methods do not use the target statistics.
		if d := len(s.XMean); d > 0 {
			if err := s.TransformX(mat.NewDense(1, d, nil)); err != nil {
				t.Errorf("TransformX with target scale %v: %v", s.YScale, err)
			}
		}
		y := []float64{1}
		for name, f := range map[string]func(){
			"TransformY":       func() { s.TransformY(y) },
			"InverseY":         func() { s.InverseY(y, y) },
			"LogDensityOffset": func() { s.LogDensityOffset() },
		} {
			if msg := panics(f); !strings.Contains(msg, "target has mean") {
				t.Errorf("%s with target mean %v, scale %v: panic %q, y = %v", name, s.YMean, s.YScale, msg, y)
			}
		}
	}
	if msg := panics(func() { nilS.TransformY(nil) }); msg == "" {
		t.Error("nil.TransformY: no panic")
	}
}

func TestStandardizerConstantLargeColumn(t *testing.T) {
	// A constant column whose mean is not exactly representable after
	// summation must still be recognised as constant.
	n := 1001
	x := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 0.1+1e6)
	}
	s, err := FitStandardizer(x, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.XScale[0] != 1 {
		t.Errorf("scale of a constant column = %v, want 1", s.XScale[0])
	}
}

func TestRandomSplit(t *testing.T) {
	s, err := RandomSplit(40000, 0.2, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Test) != 8000 || len(s.Valid) != 6400 || len(s.Train) != 25600 {
		t.Errorf("sizes %d %d %d", len(s.Train), len(s.Valid), len(s.Test))
	}
	seen := make([]int, 40000)
	for _, set := range [][]int{s.Train, s.Valid, s.Test} {
		for k, i := range set {
			seen[i]++
			if k > 0 && set[k-1] >= i {
				t.Fatal("set not sorted")
			}
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("row %d appears %d times", i, c)
		}
	}
	s2, _ := RandomSplit(40000, 0.2, 0.2, 1)
	s3, _ := RandomSplit(40000, 0.2, 0.2, 2)
	if !equalInts(s.Test, s2.Test) || !equalInts(s.Valid, s2.Valid) {
		t.Error("same seed gave different splits")
	}
	if equalInts(s.Test, s3.Test) {
		t.Error("different seeds gave the same split")
	}
	for _, c := range []struct {
		n    int
		a, b float64
	}{{0, 0.2, 0.2}, {10, 1, 0}, {10, -0.1, 0}, {10, 0.2, math.NaN()}, {1, 0.6, 0},
		{1 << 50, 0.2, 0.2}, {math.MaxInt, 0, 0}} { // rows no permutation can hold
		if _, err := RandomSplit(c.n, c.a, c.b, 1); err == nil {
			t.Errorf("RandomSplit(%d, %v, %v) accepted", c.n, c.a, c.b)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMasksAndMaskSplit(t *testing.T) {
	content := "split0,split1\n1,0\n0,1\n0,1\n0,1\n1,0\n"
	path := writeFile(t, "m_test_mask.csv.gz", content, true)
	masks, err := LoadTestMasks(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(masks) != 2 || len(masks[0]) != 5 || !masks[0][0] || !masks[0][4] || masks[0][1] || !masks[1][1] {
		t.Fatalf("masks = %v", masks)
	}
	s, err := MaskSplit(masks[0], 0.34, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !equalInts(s.Test, []int{0, 4}) || len(s.Valid) != 1 || len(s.Train) != 2 {
		t.Errorf("split %+v", s)
	}
	_, err = ReadTestMasks(strings.NewReader("split0\n0\n2\n"), "m.csv")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || pe.Column != 1 || !strings.Contains(err.Error(), "not 0 or 1") {
		t.Errorf("bad mask value: %v", err)
	}
	if _, err := MaskSplit([]bool{true, true}, 0, 1); err == nil {
		t.Error("all-test mask accepted")
	}
}

func TestLoadUCIAndRows(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("x1,x2,y\n")
	for i := 0; i < 10; i++ {
		b.WriteString(strings.Repeat("1.5,", 2) + "0.25\n")
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(b.String()))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "toy.csv.gz"), buf.Bytes(), 0o644)
	buf.Reset()
	zw = gzip.NewWriter(&buf)
	zw.Write([]byte("split0,split1\n" + strings.Repeat("0,1\n", 9) + "1,0\n"))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "toy_test_mask.csv.gz"), buf.Bytes(), 0o644)
	tab, err := LoadUCI(dir, "toy")
	if err != nil {
		t.Fatal(err)
	}
	if r, c := tab.X.Dims(); r != 10 || c != 2 || tab.Y[9] != 0.25 {
		t.Errorf("dims %d %d", r, c)
	}
	if _, err := LoadUCIMasks(dir, "toy", 10); err != nil {
		t.Error(err)
	}
	if _, err := LoadUCIMasks(dir, "toy", 11); err == nil {
		t.Error("row-count mismatch accepted")
	}
	if _, err := LoadUCI(dir, ""); err == nil {
		t.Error("empty name accepted")
	}
	if len(UCIDatasets()) != 6 {
		t.Error("UCIDatasets")
	}
	xs, ys, err := Rows(tab.X, tab.Y, []int{9, 0})
	if err != nil || xs.At(0, 0) != 1.5 || len(ys) != 2 {
		t.Errorf("Rows: %v", err)
	}
	if _, _, err := Rows(tab.X, tab.Y, []int{10}); err == nil {
		t.Error("out-of-range row accepted")
	}
	if _, _, err := Rows(tab.X, tab.Y[:3], []int{1}); err == nil {
		t.Error("length mismatch accepted")
	}
}

func TestPrepare(t *testing.T) {
	n := 50
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, float64(i))
		x.Set(i, 1, 7) // constant column
		y[i] = 3*float64(i) + 100
	}
	tab := &Table{X: x, Y: y}
	s, _ := RandomSplit(n, 0.2, 0.25, 4)
	sets, err := Prepare(tab, s)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := sets.XTrain.Dims(); r != len(s.Train) || len(sets.YValid) != len(s.Valid) || len(sets.YTest) != len(s.Test) {
		t.Fatal("part sizes")
	}
	// Training part: zero mean, unit variance; the others use the
	// training statistics, so a test row maps back exactly.
	var m, v float64
	for _, a := range sets.YTrain {
		m += a
		v += a * a
	}
	nt := float64(len(sets.YTrain))
	if math.Abs(m/nt) > 1e-12 || math.Abs(v/nt-1) > 1e-12 {
		t.Errorf("training targets: mean %v, second moment %v", m/nt, v/nt)
	}
	got := []float64{sets.YTest[0]}
	sets.Std.InverseY(got, nil)
	if math.Abs(got[0]-y[s.Test[0]]) > 1e-12 {
		t.Errorf("test target round trip %v vs %v", got[0], y[s.Test[0]])
	}
	if sets.XTest.At(0, 1) != 0 || sets.Std.XScale[1] != 1 {
		t.Error("constant column")
	}
	// The input table is not modified.
	if x.At(s.Test[0], 0) != float64(s.Test[0]) {
		t.Error("Prepare modified the table")
	}
	s.Valid, s.Test = nil, nil
	sets, err = Prepare(tab, s)
	if err != nil || sets.XValid != nil || sets.XTest != nil {
		t.Errorf("empty parts: %v", err)
	}
	if _, err := Prepare(&Table{X: x}, s); err == nil {
		t.Error("table without targets accepted")
	}
}

// TestPrepareNonFinite checks that Prepare refuses a hand-built table with
// a NaN or infinite value in any selected row, naming the part and the
// value's place in the table, and ignores such values in rows it does not
// select.
func TestPrepareNonFinite(t *testing.T) {
	s := Split{Train: []int{0, 1, 2}, Valid: []int{3}, Test: []int{4}}
	for _, tc := range []struct {
		row, col int // col < 0: the target
		v        float64
		want     string
	}{
		{4, 1, math.NaN(), "test rows: input X[4][1] is NaN"},
		{3, 0, math.Inf(1), "validation rows: input X[3][0] is +Inf"},
		{1, 0, math.NaN(), "training rows: input X[1][0] is NaN"},
		{2, -1, math.Inf(-1), "training rows: target Y[2] is -Inf"},
		{4, -1, math.NaN(), "test rows: target Y[4] is NaN"},
		{5, 0, math.NaN(), ""}, // not selected
	} {
		x := mat.NewDense(6, 2, []float64{1, 2, 3, 5, 4, 1, 7, 8, 9, 1, 0, 0})
		y := []float64{1, 2, 4, 8, 16, 32}
		if tc.col < 0 {
			y[tc.row] = tc.v
		} else {
			x.Set(tc.row, tc.col, tc.v)
		}
		_, err := Prepare(&Table{X: x, Y: y}, s)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v in an unselected row: %v", tc.v, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v at row %d, column %d: %v, want %q", tc.v, tc.row, tc.col, err, tc.want)
		}
	}
}

// TestTablePositions checks that Pos maps a value of X or Y back to the
// line and column of the file it came from, counting the header, blank
// lines and multi-line quoted fields, and skipping the target column.
func TestTablePositions(t *testing.T) {
	const in = "a,y,b\n\n1,2,3\n\"4\n\",5,6\n7,8,9\n"
	tab, err := ReadCSV(strings.NewReader(in), "p.csv", Options{Target: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{3, 4, 6}; !slices.Equal(tab.Lines, want) || tab.TargetColumn != 2 {
		t.Fatalf("lines %v, target column %d; want %v, 2", tab.Lines, tab.TargetColumn, want)
	}
	for _, c := range []struct{ row, col, line, column int }{
		{0, 0, 3, 1}, {0, 1, 3, 3}, {0, -1, 3, 2}, {2, 1, 6, 3}, {1, -1, 4, 2},
		{3, 0, 0, 0}, {0, 2, 0, 0}, {-1, 0, 0, 0},
	} {
		if l, col := tab.Pos(c.row, c.col); l != c.line || col != c.column {
			t.Errorf("Pos(%d, %d) = %d, %d; want %d, %d", c.row, c.col, l, col, c.line, c.column)
		}
	}
	// Without a target every column is an input.
	tab, err = ReadCSV(strings.NewReader("1,2\n3,4\n"), "p.csv", Options{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	if l, c := tab.Pos(1, 1); l != 2 || c != 2 {
		t.Errorf("no target: Pos(1, 1) = %d, %d", l, c)
	}
	if l, c := tab.Pos(1, -1); l != 0 || c != 0 {
		t.Errorf("no target: Pos(1, -1) = %d, %d", l, c)
	}
	// Last-column target (the default).
	tab, err = ReadCSV(strings.NewReader("1,2,3\n"), "p.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l, c := tab.Pos(0, 1); l != 1 || c != 2 {
		t.Errorf("default target: Pos(0, 1) = %d, %d", l, c)
	}
	if l, c := tab.Pos(0, -1); l != 1 || c != 3 {
		t.Errorf("default target: Pos(0, -1) = %d, %d", l, c)
	}
	var nilTab *Table
	if l, c := nilTab.Pos(0, 0); l != 0 || c != 0 {
		t.Errorf("nil table: %d, %d", l, c)
	}
}

func TestNilMatrix(t *testing.T) {
	if _, err := FitStandardizer(nil, nil); err == nil {
		t.Error("FitStandardizer(nil) accepted")
	}
	if _, _, err := Rows(nil, nil, []int{0}); err == nil {
		t.Error("Rows(nil) accepted")
	}
	// An empty matrix has no rows: an index error, not a panic in mat.
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		_, _, err = Rows(&mat.Dense{}, nil, []int{0})
	}()
	if err == nil || !strings.Contains(err.Error(), "index 0 out of range [0, 0)") {
		t.Errorf("Rows(&mat.Dense{}, nil, {0}): %v", err)
	}
}

// TestStandardizerHugeValues checks columns whose sums or squares overflow
// float64: the statistics must be finite and right, not Inf with a nil
// error.
func TestStandardizerHugeValues(t *testing.T) {
	x := mat.NewDense(2, 3, []float64{1.7e308, 1e200, 3, 1.7e308, -1e200, 5})
	s, err := FitStandardizer(x, []float64{1e300, -1e300})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ mean, scale float64 }{{1.7e308, 1}, {0, 1e200}, {4, 1}}
	for j, w := range want {
		if math.Abs(s.XMean[j]-w.mean) > 1e-15*math.Abs(w.mean) || math.Abs(s.XScale[j]-w.scale) > 1e-15*w.scale {
			t.Errorf("column %d: mean %g scale %g, want %g and %g", j, s.XMean[j], s.XScale[j], w.mean, w.scale)
		}
	}
	if s.YMean != 0 || math.Abs(s.YScale-1e300) > 1e285 {
		t.Errorf("target: mean %g scale %g, want 0 and 1e300", s.YMean, s.YScale)
	}
	if err := s.TransformX(x); err != nil {
		t.Fatal(err)
	}
	if got := x.RawRowView(0); got[0] != 0 || got[1] != 1 || got[2] != -1 {
		t.Errorf("standardized first row %v, want [0 1 -1]", got)
	}
	// Values of opposite signs near the limit: x − mean overflows, the
	// standardized value does not.
	z := mat.NewDense(3, 1, []float64{1.7e308, -1.7e308, -1.7e308})
	sz, err := FitStandardizer(z, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sz.TransformX(z); err != nil {
		t.Fatal(err)
	}
	if v := z.At(0, 0); math.IsInf(v, 0) || math.Abs(v-math.Sqrt2) > 1e-12 {
		t.Errorf("standardized 1.7e308 of {1.7e308, −1.7e308, −1.7e308} = %v, want √2", v)
	}
	bad := &Standardizer{XMean: []float64{0, 0, 0}, XScale: []float64{1, 1}}
	if err := bad.TransformX(x); err == nil {
		t.Error("TransformX with two scales for three columns accepted")
	}
}
