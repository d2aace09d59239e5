package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/convgp"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/train"
)

// idxFile encodes an unsigned-byte IDX file. Unlike dataset.IDX.WriteTo
// it writes whatever it is given, headers that do not describe the data
// included, which the tests of malformed files need.
func idxFile(dims []int, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

// blobBytes draws n side×side images of two classes: a bright square in
// the top-left or the bottom-right quarter, on noise.
func blobBytes(rng *rand.Rand, n, side int) (px, labels []byte) {
	px, labels = make([]byte, n*side*side), make([]byte, n)
	for i := range labels {
		c := rng.IntN(2)
		labels[i] = byte(c)
		for r := 0; r < side; r++ {
			for q := 0; q < side; q++ {
				v := 40 * rng.Float64()
				if (c == 0 && r < side/2 && q < side/2) || (c == 1 && r >= side/2 && q >= side/2) {
					v += 200
				}
				px[(i*side+r)*side+q] = byte(v)
			}
		}
	}
	return px, labels
}

// standardized returns the images as the classify command feeds them to
// the model: bytes/255, then (v − mean)/sd.
func standardized(px []byte, n int, mean, sd float64) *mat.Dense {
	x := mat.NewDense(n, len(px)/n, nil)
	for i, b := range px {
		x.RawMatrix().Data[i] = (float64(b)/255 - mean) / sd
	}
	return x
}

// classifyFixture trains a small two-layer convolutional model on 8×8
// blob images with standardized pixels, saves it with the standardization
// in its info, and writes labelled test images as IDX files.
type classifyFixture struct {
	dir, model, images, labels string
	deep                       *convgp.Deep
	px                         []byte     // the test images
	x                          *mat.Dense // and standardized
	y                          []float64
	mean, sd                   float64
}

func newClassifyFixture(t *testing.T) *classifyFixture {
	t.Helper()
	const side, nTrain, nTest = 8, 80, 30
	rng := rand.New(rand.NewPCG(5, 6))
	trPx, trLab := blobBytes(rng, nTrain, side)
	tePx, teLab := blobBytes(rng, nTest, side)
	f := &classifyFixture{dir: t.TempDir(), mean: 0.3, sd: 0.4}
	xTrain := standardized(trPx, nTrain, f.mean, f.sd)
	yTrain := make([]float64, nTrain)
	for i, l := range trLab {
		yTrain[i] = float64(l)
	}
	deep, err := convgp.NewDeep(xTrain, convgp.DeepConfig{
		Height: side, Width: side, Channels: 1, Classes: 2, Kind: gp.SOLVEGP, Whiten: true,
		Variance: 1, Lengthscale: 1, LocLengthscale: 2,
		Hidden: []convgp.Hidden{{PatchHeight: 3, PatchWidth: 3, Stride: 1, Channels: 2, M: 5, M2: 5}},
		Output: convgp.Output{PatchHeight: 2, PatchWidth: 2, M: 5, M2: 5, TICK: true},
		Init:   convgp.InitOptions{Seed: 1}, Seed: 9, Threads: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := train.Fit(context.Background(), deep, xTrain, yTrain, train.Config{
		MaxSteps: 60, BatchSize: 20, Schedule: train.Constant(0.05), Seed: 3,
	}); err != nil {
		t.Fatal(err)
	}
	f.deep = deep
	f.model = filepath.Join(f.dir, "blobs.cgp")
	info := map[string]string{"pixel_mean": strconv.FormatFloat(f.mean, 'g', -1, 64), "pixel_sd": strconv.FormatFloat(f.sd, 'g', -1, 64)}
	if err := convgp.SaveModel(f.model, deep, info); err != nil {
		t.Fatal(err)
	}
	f.images = filepath.Join(f.dir, "images-idx3-ubyte")
	f.labels = filepath.Join(f.dir, "labels-idx1-ubyte")
	if err := os.WriteFile(f.images, idxFile([]int{nTest, side, side}, tePx), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.labels, idxFile([]int{nTest}, teLab), 0o644); err != nil {
		t.Fatal(err)
	}
	f.px, f.x = tePx, standardized(tePx, nTest, f.mean, f.sd)
	for _, l := range teLab {
		f.y = append(f.y, float64(l))
	}
	return f
}

// readProbCSV parses classify's CSV output.
func readProbCSV(t *testing.T, s string, classes int, withLabel bool) (probs [][]float64, class, label []int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	want := "p_0,p_1,class"
	if withLabel {
		want += ",label"
	}
	if lines[0] != want {
		t.Fatalf("CSV header %q, want %q", lines[0], want)
	}
	for _, ln := range lines[1:] {
		f := strings.Split(ln, ",")
		row := make([]float64, classes)
		for j := range row {
			v, err := strconv.ParseFloat(f[j], 64)
			if err != nil {
				t.Fatal(err)
			}
			row[j] = v
		}
		probs = append(probs, row)
		c, _ := strconv.Atoi(f[classes])
		class = append(class, c)
		if withLabel {
			l, _ := strconv.Atoi(f[classes+1])
			label = append(label, l)
		}
	}
	return probs, class, label
}

func TestClassify(t *testing.T) {
	f := newClassifyFixture(t)
	// With labels: the metrics of Deep.Evaluate, to the bit, for the same
	// samples and batch.
	for _, s := range []struct{ samples, batch int }{{5, 250}, {3, 7}} {
		code, out, errOut := runCmd(t, "classify", "-model", f.model, "-labels", f.labels, "-json",
			"-samples", strconv.Itoa(s.samples), "-batch", strconv.Itoa(s.batch), f.images)
		if code != exitOK {
			t.Fatalf("classify: exit %d: %s", code, errOut)
		}
		var m classifyMetrics
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		acc, ll, err := f.deep.Evaluate(f.x, f.y, s.samples, s.batch)
		if err != nil {
			t.Fatal(err)
		}
		if m.N != len(f.y) || m.Accuracy != acc || m.LogLik != ll || m.Samples != s.samples {
			t.Errorf("samples %d batch %d: classify %+v, Evaluate accuracy %v log-lik %v", s.samples, s.batch, m, acc, ll)
		}
		if acc < 0.9 {
			t.Errorf("accuracy %v on blobs: the model did not learn", acc)
		}
	}
	want, err := f.deep.Predict(f.x, 5, 250)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, probs [][]float64, class []int) {
		t.Helper()
		if len(probs) != len(f.y) {
			t.Fatalf("%s: %d rows, want %d", name, len(probs), len(f.y))
		}
		for i, row := range probs {
			for j, p := range row {
				if p != want.At(i, j) {
					t.Fatalf("%s: p[%d][%d] = %v, Predict gives %v", name, i, j, p, want.At(i, j))
				}
			}
			if c := argmax(want.RawRowView(i)); class[i] != c {
				t.Fatalf("%s: class[%d] = %d, want %d", name, i, class[i], c)
			}
		}
	}
	// Without labels: the probabilities as CSV on standard output.
	code, out, errOut := runCmd(t, "classify", "-model", f.model, f.images)
	if code != exitOK {
		t.Fatalf("classify: exit %d: %s", code, errOut)
	}
	probs, class, _ := readProbCSV(t, out, 2, false)
	check("no labels", probs, class)

	// Labels and -out: the CSV with labels in the file, the metrics on
	// standard output.
	csvPath := filepath.Join(f.dir, "probs.csv")
	code, out, errOut = runCmd(t, "classify", "-model", f.model, "-labels", f.labels, "-out", csvPath, f.images)
	if code != exitOK {
		t.Fatalf("classify -out: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "accuracy") || !strings.Contains(out, "log-lik") {
		t.Errorf("classify -out printed %q", out)
	}
	b, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	probs, class, label := readProbCSV(t, string(b), 2, true)
	check("-out", probs, class)
	for i, l := range label {
		if float64(l) != f.y[i] {
			t.Fatalf("label[%d] = %d, want %v", i, l, f.y[i])
		}
	}
	// -out - with labels: the CSV on standard output, the metrics on
	// standard error.
	code, out, errOut = runCmd(t, "classify", "-model", f.model, "-labels", f.labels, "-out", "-", f.images)
	if code != exitOK || !strings.HasPrefix(out, "p_0,p_1,class,label\n") || !strings.Contains(errOut, "accuracy") {
		t.Fatalf("classify -out -: exit %d, stdout %.40q, stderr %q", code, out, errOut)
	}

	// -pixel-mean and -pixel-sd replace the model file's values.
	code, out, errOut = runCmd(t, "classify", "-model", f.model, "-pixel-mean", "0", "-pixel-sd", "1", f.images)
	if code != exitOK {
		t.Fatalf("classify -pixel-*: exit %d: %s", code, errOut)
	}
	want, err = f.deep.Predict(standardized(f.px, len(f.y), 0, 1), 5, 250)
	if err != nil {
		t.Fatal(err)
	}
	probs, class, _ = readProbCSV(t, out, 2, false)
	check("-pixel-*", probs, class)
}

func TestClassifyErrors(t *testing.T) {
	f := newClassifyFixture(t)
	dir := f.dir
	small := writeFile(t, dir, "small-idx3", string(idxFile([]int{2, 6, 6}, make([]byte, 72))))
	bigLabel := writeFile(t, dir, "big-idx1", string(idxFile([]int{30}, append(make([]byte, 29), 5))))
	empty := writeFile(t, dir, "empty-idx3", string(idxFile([]int{0, 8, 8}, nil)))
	// A model whose info has a pixel_sd that is not a number.
	badInfo := filepath.Join(dir, "badinfo.cgp")
	if err := convgp.SaveModel(badInfo, f.deep, map[string]string{"pixel_sd": "wide"}); err != nil {
		t.Fatal(err)
	}
	zeroSD := filepath.Join(dir, "zerosd.cgp")
	if err := convgp.SaveModel(zeroSD, f.deep, map[string]string{"pixel_sd": "0"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no images", []string{"-model", f.model}, exitUsage, "need an image file"},
		{"image size", []string{"-model", f.model, small}, exitError, "the model takes 8×8×1"},
		{"label range", []string{"-model", f.model, "-labels", bigLabel, f.images}, exitError, "out of range [0, 2)"},
		{"no images in file", []string{"-model", f.model, empty}, exitError, "no images"},
		{"format", []string{"-model", f.model, "-format", "png", f.images}, exitError, `-format "png"`},
		{"cifar labels", []string{"-model", f.model, "-format", "cifar10", "-labels", f.labels, f.images}, exitError, "hold their labels"},
		{"two idx files", []string{"-model", f.model, f.images, small}, exitUsage, "takes one image file"},
		// The header is checked before the data is read: this file's data
		// is missing.
		{"image size from the header", []string{"-model", f.model, writeFile(t, dir, "header-only", string(idxFile([]int{1 << 20, 28, 28}, nil)))}, exitError, "images are 28×28×1"},
		{"image dims", []string{"-model", f.model, writeFile(t, dir, "vector-idx", string(idxFile([]int{64}, make([]byte, 64))))}, exitError, "want 3"},
		{"bad info", []string{"-model", badInfo, f.images}, exitError, `pixel_sd "wide"`},
		// A wrong flag value is named as the flag's, not blamed on the
		// model file (it was "<model>.cgp: pixel standard deviation 0").
		{"pixel sd", []string{"-model", f.model, "-pixel-sd", "0", f.images}, exitError, "classify: -pixel-sd 0: must be positive and finite\n"},
		{"pixel mean", []string{"-model", f.model, "-pixel-mean", "NaN", f.images}, exitError, "classify: -pixel-mean NaN: must be finite\n"},
		{"info pixel sd 0", []string{"-model", zeroSD, f.images}, exitError, zeroSD + `: the model file's info pixel_sd "0": must be positive and finite (give -pixel-sd)`},
		{"labels ignored", []string{"-model", f.model, "-labels", f.labels, "-ignore-labels", f.images}, exitUsage, "-labels and -ignore-labels contradict each other"},
		{"first", []string{"-model", f.model, "-first", "-1", f.images}, exitError, "-first -1: must be ≥ 0"},
		{"pixel flag syntax", []string{"-model", f.model, "-pixel-mean", "dark", f.images}, exitUsage, "invalid value"},
		{"samples", []string{"-model", f.model, "-samples", "0", f.images}, exitError, "-samples 0"},
		{"missing model", []string{"-model", filepath.Join(dir, "none.cgp"), f.images}, exitError, "no such file"},
		{"not a model", []string{"-model", f.images, "-labels", f.labels, small}, exitError, "images-idx3-ubyte"},
		{"out is the model", []string{"-model", f.model, "-out", f.model, f.images}, exitError, "same file"},
		{"out is the images", []string{"-model", f.model, "-out", f.images, f.images}, exitError, "same file"},
		{"out is the labels", []string{"-model", f.model, "-labels", f.labels, "-out", f.labels, f.images}, exitError, "same file"},
		{"out is a directory", []string{"-model", f.model, "-out", dir, f.images}, exitError, "is a directory"},
	}
	for _, c := range cases {
		code, _, errOut := runCmd(t, append([]string{"classify"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d (want %d), stderr %q (want %q)", c.name, code, c.code, errOut, c.want)
		}
	}
	// The model file is intact after the refused -out.
	if _, _, err := convgp.LoadModel(f.model); err != nil {
		t.Errorf("model file after a refused -out: %v", err)
	}
	// A run interrupted before it starts, or after reading its inputs,
	// writes nothing and leaves an earlier output alone.
	out := writeFile(t, dir, "earlier.csv", "earlier results\n")
	for _, when := range []string{"start", "predict"} {
		ctx, cancel := context.WithCancel(context.Background())
		if when == "start" {
			cancel()
		} else {
			testHookBeforePredict = cancel
		}
		code, _, errOut := runCtx(t, ctx, nil, "classify", "-model", f.model, "-out", out, f.images)
		testHookBeforePredict = nil
		cancel()
		if code != exitInterrupted {
			t.Errorf("interrupted at %s: exit %d: %s", when, code, errOut)
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != "earlier results\n" {
			t.Errorf("interrupted at %s: -out holds %q, %v", when, b, err)
		}
	}
}

// TestClassifyFirst checks that -first N classifies the first N images as
// bench/convgp -test N evaluates its test images: Deep.Evaluate of the
// first N images with the same samples and batch, to the bit, which is not
// the first N rows of the probabilities of all the images (a deep model
// draws its samples batch by batch).
func TestClassifyFirst(t *testing.T) {
	f := newClassifyFixture(t)
	const n, samples = 20, 3
	xn := f.x.Slice(0, n, 0, 64).(*mat.Dense)
	code, out, errOut := runCmd(t, "classify", "-model", f.model, "-labels", f.labels, "-json",
		"-samples", strconv.Itoa(samples), "-first", strconv.Itoa(n), f.images)
	if code != exitOK {
		t.Fatalf("classify -first: exit %d: %s", code, errOut)
	}
	var m classifyMetrics
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	acc, ll, err := f.deep.Evaluate(xn, f.y[:n], samples, 250)
	if err != nil {
		t.Fatal(err)
	}
	if m.N != n || m.Accuracy != acc || m.LogLik != ll {
		t.Errorf("-first %d: classify %+v, Evaluate of the first %d images: accuracy %v log-lik %v", n, m, n, acc, ll)
	}
	// The probabilities: those of the first n images predicted alone.
	code, out, errOut = runCmd(t, "classify", "-model", f.model, "-samples", strconv.Itoa(samples), "-first", strconv.Itoa(n), f.images)
	if code != exitOK {
		t.Fatalf("classify -first: exit %d: %s", code, errOut)
	}
	probs, _, _ := readProbCSV(t, out, 2, false)
	want, err := f.deep.Predict(xn, samples, 250)
	if err != nil {
		t.Fatal(err)
	}
	all, err := f.deep.Predict(f.x, samples, 250)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != n {
		t.Fatalf("-first %d: %d rows", n, len(probs))
	}
	same := true
	for i, row := range probs {
		for j, p := range row {
			if p != want.At(i, j) {
				t.Fatalf("-first %d: p[%d][%d] = %v, Predict of the first %d images gives %v", n, i, j, p, n, want.At(i, j))
			}
			same = same && p == all.At(i, j)
		}
	}
	if same {
		t.Error("the first rows of all the images' probabilities are those of the first images alone: the test does not tell them apart")
	}
	// More than the file holds is an error, not a silent "all of them".
	code, out, errOut = runCmd(t, "classify", "-model", f.model, "-labels", f.labels, "-json", "-first", "1000", f.images)
	if want := fmt.Sprintf("solvegp classify: -first 1000: there are only %d images (%s)\n", len(f.y), f.images); code != exitError || out != "" || errOut != want {
		t.Errorf("-first 1000: exit %d, stdout %q, stderr %q, want %q", code, out, errOut, want)
	}
	// Exactly as many as the file holds is fine.
	code, out, errOut = runCmd(t, "classify", "-model", f.model, "-labels", f.labels, "-json", "-first", strconv.Itoa(len(f.y)), f.images)
	if code != exitOK || !strings.Contains(out, fmt.Sprintf(`"n": %d`, len(f.y))) {
		t.Errorf("-first %d: exit %d, stdout %q, stderr %q", len(f.y), code, out, errOut)
	}
}

// TestClassifyPixelWarning checks that a model file that does not say how
// its pixels were prepared is used with a warning, unless both pixel flags
// are given.
func TestClassifyPixelWarning(t *testing.T) {
	f := newClassifyFixture(t)
	bare := filepath.Join(f.dir, "bare.cgp")
	if err := convgp.SaveModel(bare, f.deep, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model string
		flags []string
		warn  bool
	}{
		{bare, nil, true},
		{bare, []string{"-pixel-mean", "0.3"}, true},
		{bare, []string{"-pixel-mean", "0.3", "-pixel-sd", "0.4"}, false},
		{f.model, nil, false},
	} {
		args := append(append([]string{"classify", "-model", c.model, "-out", filepath.Join(f.dir, "p.csv")}, c.flags...), f.images)
		code, _, errOut := runCmd(t, args...)
		if code != exitOK || strings.Contains(errOut, "does not record how its pixels") != c.warn {
			t.Errorf("%v: exit %d, stderr %q, want warning %v", args, code, errOut, c.warn)
		}
	}
}

// TestClassifyManyClasses classifies IDX images with labels under a model
// of more classes than a byte holds.
func TestClassifyManyClasses(t *testing.T) {
	f := newClassifyFixture(t)
	// Three images (the robust-max predictive costs C² per image).
	const n = 3
	x := standardized(f.px[:n*64], n, 0, 1)
	images := writeFile(t, f.dir, "three-idx3", string(idxFile([]int{n, 8, 8}, f.px[:n*64])))
	labels := writeFile(t, f.dir, "three-idx1", string(idxFile([]int{n}, []byte{0, 1, 255})))
	y := []float64{0, 1, 255}
	deep, err := convgp.NewDeep(x, convgp.DeepConfig{
		Height: 8, Width: 8, Channels: 1, Classes: 257, Kind: gp.SVGP, Whiten: true,
		Variance: 1, Lengthscale: 1,
		Output: convgp.Output{PatchHeight: 3, PatchWidth: 3, M: 3},
		Init:   convgp.InitOptions{Seed: 1}, Threads: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(f.dir, "many.cgp")
	if err := convgp.SaveModel(model, deep, map[string]string{"pixels": "in [0, 1]"}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, "classify", "-model", model, "-labels", labels, "-json", images)
	if code != exitOK {
		t.Fatalf("257 classes: exit %d: %s", code, errOut)
	}
	var m classifyMetrics
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	acc, ll, err := deep.Evaluate(x, y, 1, 250)
	if err != nil {
		t.Fatal(err)
	}
	if m.N != n || m.Accuracy != acc || m.LogLik != ll {
		t.Errorf("257 classes: classify %+v, Evaluate %v %v", m, acc, ll)
	}
}

// TestClassifyCIFAR classifies CIFAR-10 records, which hold their labels,
// with a model of their size trained a little on them, so that its
// predictions depend on the pixels.
func TestClassifyCIFAR(t *testing.T) {
	const side, n = 32, 12
	rng := rand.New(rand.NewPCG(7, 8))
	var file bytes.Buffer
	x := mat.NewDense(2*n, side*side*3, nil) // the file, read twice
	y := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		y[i] = float64(rng.IntN(10))
		file.WriteByte(byte(y[i]))
		rec := make([]byte, 3*side*side) // planes: red, green, blue
		for k := range rec {
			rec[k] = byte(rng.IntN(256))
		}
		file.Write(rec)
		for p := 0; p < side*side; p++ { // the model's layout: HWC
			for c := 0; c < 3; c++ {
				x.Set(i, 3*p+c, float64(rec[c*side*side+p])/255)
				x.Set(n+i, 3*p+c, float64(rec[c*side*side+p])/255)
			}
		}
		y[n+i] = y[i]
	}
	dir := t.TempDir()
	data := writeFile(t, dir, "test_batch.bin", file.String())
	build := func(classes int) *convgp.Deep {
		deep, err := convgp.NewDeep(x, convgp.DeepConfig{
			Height: side, Width: side, Channels: 3, Classes: classes, Kind: gp.SVGP, Whiten: true,
			Variance: 1, Lengthscale: 1,
			Output: convgp.Output{PatchHeight: 5, PatchWidth: 5, M: 4},
			Init:   convgp.InitOptions{Seed: 1}, Threads: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		return deep
	}
	deep := build(10)
	if _, err := train.Fit(context.Background(), deep, x, y, train.Config{
		MaxSteps: 10, BatchSize: 12, Schedule: train.Constant(0.1), Seed: 3,
	}); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "cifar.cgp")
	if err := convgp.SaveModel(model, deep, map[string]string{"pixels": "in [0, 1]"}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, "classify", "-model", model, "-format", "cifar10", "-json", data, data)
	if code != exitOK {
		t.Fatalf("classify: exit %d: %s", code, errOut)
	}
	var m classifyMetrics
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	acc, ll, err := deep.Evaluate(x, y, 1, 250)
	if err != nil {
		t.Fatal(err)
	}
	if m.N != 2*n || m.Accuracy != acc || m.LogLik != ll || m.Samples != 1 {
		t.Errorf("classify %+v, Evaluate accuracy %v log-lik %v", m, acc, ll)
	}
	probs, err := deep.Predict(x, 1, 250)
	if err != nil {
		t.Fatal(err)
	}
	if mat.Equal(probs.RowView(0), probs.RowView(1)) {
		t.Fatal("the model predicts the same for two images: the test would not see the pixels")
	}

	// A model of fewer classes than the labels: refused, unless the
	// labels are ignored.
	few := filepath.Join(dir, "few.cgp")
	if err := convgp.SaveModel(few, build(3), map[string]string{"pixels": "in [0, 1]"}); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd(t, "classify", "-model", few, "-format", "cifar10", data); code != exitError || !strings.Contains(errOut, "-ignore-labels") {
		t.Errorf("labels beyond the model's classes: exit %d, %q", code, errOut)
	}
	code, out, errOut = runCmd(t, "classify", "-model", few, "-format", "cifar10", "-ignore-labels", data)
	if code != exitOK || !strings.HasPrefix(out, "p_0,p_1,p_2,class\n") || strings.Count(out, "\n") != n+1 {
		t.Errorf("-ignore-labels: exit %d, stdout %.60q, stderr %q", code, out, errOut)
	}
}

// TestWrongKindOfFile: a model file of the other kind, or a training
// checkpoint, given where a model file (or a checkpoint) is read is named
// for what it is, with the command that takes it, instead of a JSON
// parser's error.
func TestWrongKindOfFile(t *testing.T) {
	dir := t.TempDir()
	data := writeRegression(t, dir, 40, 7)
	sn := filepath.Join(dir, "sn.json")
	if code, _, errOut := runCmd(t, "train", "-quiet", "-m", "3", "-m2", "2", "-epochs", "1", "-out", sn, data); code != exitOK {
		t.Fatalf("train: %d %s", code, errOut)
	}
	ck := filepath.Join(dir, "ck.json")
	if err := saveTrainCheckpoint(ck, &trainCheckpoint{Version: trainCheckpointVersion}); err != nil {
		t.Fatal(err)
	}
	const side = 6
	px, _ := blobBytes(rand.New(rand.NewPCG(1, 2)), 10, side)
	deep, err := convgp.NewDeep(standardized(px, 10, 0, 1), convgp.DeepConfig{
		Height: side, Width: side, Channels: 1, Classes: 2, Kind: gp.SVGP, Whiten: true,
		Variance: 1, Lengthscale: 1, Output: convgp.Output{PatchHeight: 3, PatchWidth: 3, M: 4},
		Init: convgp.InitOptions{Seed: 1}, Seed: 1, Threads: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	cgp := filepath.Join(dir, "tiny.cgp")
	if err := convgp.SaveModel(cgp, deep, nil); err != nil {
		t.Fatal(err)
	}
	images := writeFile(t, dir, "images-idx3", string(idxFile([]int{10, side, side}, px)))
	// The magic line of bench/convgp's checkpoints, then binary.
	convCk := writeFile(t, dir, "convgp.ckpt", "convgp-ckpt-v2\n\x0f\xff\x81\x03\x01")
	for _, tc := range []struct {
		args []string
		want string // the whole of stderr after "solvegp <command>: "
	}{
		{[]string{"predict", "-model", ck, data}, ck + " is a training checkpoint (solvegp train -checkpoint resumes from it), not a model file"},
		{[]string{"eval", "-model", ck, data}, ck + " is a training checkpoint (solvegp train -checkpoint resumes from it), not a model file"},
		{[]string{"classify", "-model", ck, images}, ck + " is a training checkpoint (solvegp train -checkpoint resumes from it), not a model file"},
		{[]string{"predict", "-model", cgp, data}, cgp + " is a convolutional model file: use solvegp classify"},
		{[]string{"predict", "-model", images, data}, images + " is not a model file: it does not begin with a JSON object, as the files of solvegp train and bench/convgp do"},
		{[]string{"eval", "-model", images, data}, images + " is not a model file: it does not begin with a JSON object, as the files of solvegp train and bench/convgp do"},
		{[]string{"predict", "-model", convCk, data}, convCk + " is a bench/convgp training checkpoint (go run ./bench/convgp -checkpoint resumes from it), not a model file"},
		{[]string{"classify", "-model", convCk, images}, convCk + " is a bench/convgp training checkpoint (go run ./bench/convgp -checkpoint resumes from it), not a model file"},
		{[]string{"train", "-quiet", "-m", "3", "-m2", "2", "-checkpoint", convCk, "-out", filepath.Join(dir, "new.json"), data},
			convCk + " is a bench/convgp training checkpoint, not one of solvegp train: give -checkpoint another file"},
		{[]string{"eval", "-model", cgp, data}, cgp + " is a convolutional model file: use solvegp classify"},
		{[]string{"classify", "-model", sn, images}, sn + " is a regression model file from solvegp train: use solvegp predict or eval"},
		{[]string{"train", "-quiet", "-m", "3", "-m2", "2", "-checkpoint", sn, "-out", filepath.Join(dir, "new.json"), data},
			sn + " is a regression model file from solvegp train, not a training checkpoint: give -checkpoint another file"},
		{[]string{"train", "-quiet", "-m", "3", "-m2", "2", "-checkpoint", cgp, "-out", filepath.Join(dir, "new.json"), data},
			cgp + " is a convolutional model file, not a training checkpoint: give -checkpoint another file"},
	} {
		code, out, errOut := runCmd(t, tc.args...)
		if want := "solvegp " + tc.args[0] + ": " + tc.want + "\n"; code != exitError || out != "" || errOut != want {
			t.Errorf("%v: exit %d, stderr\n%q, want %d and\n%q", tc.args, code, errOut, exitError, want)
		}
	}
	// The right files still load.
	if code, _, errOut := runCmd(t, "predict", "-model", sn, data); code != exitOK {
		t.Errorf("predict: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runCmd(t, "classify", "-model", cgp, "-pixel-mean", "0", "-pixel-sd", "1", images); code != exitOK {
		t.Errorf("classify: exit %d, stderr %q", code, errOut)
	}
}
