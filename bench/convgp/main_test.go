package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/convgp"
	"github.com/solvegp/solvegp/convgp/dataset"
	"github.com/solvegp/solvegp/gp/train"
)

func TestCheckpointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.ckpt")
	p := []float64{1.5, -2, 3e-300, 0}
	tc := &train.Checkpoint{Epochs: 1, Batches: 3, Steps: 12, RateScale: 0.5, Accepted: 7,
		Adam: train.AdamState{M: []float64{1, 2, 3, 4}, V: []float64{0.5, 0, 1e-300, 2}, T: 12}}
	if err := saveCheckpoint(path, &runState{Step: 42, Seconds: 12.5, Params: p, Base: 30, Train: tc, Settings: "x"}); err != nil {
		t.Fatal(err)
	}
	st, err := loadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Step != 42 || st.Seconds != 12.5 || st.Base != 30 || !reflect.DeepEqual(st.Params, p) || !reflect.DeepEqual(st.Train, tc) || st.Settings != "x" {
		t.Fatalf("got %+v", st)
	}
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b[:len(b)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCheckpoint(path); err == nil {
		t.Error("truncated checkpoint accepted")
	}
	if err := os.WriteFile(path, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCheckpoint(path); err == nil {
		t.Error("junk accepted as a checkpoint")
	}
	// Steps that do not add up.
	if err := saveCheckpoint(path, &runState{Step: 40, Params: p, Base: 30, Train: tc}); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCheckpoint(path); err == nil {
		t.Error("inconsistent checkpoint accepted")
	}

	// The first format: parameters only, resumed with a fresh Adam state.
	var v1 bytes.Buffer
	v1.WriteString(ckptMagicV1)
	binary.Write(&v1, binary.LittleEndian, int64(42))
	binary.Write(&v1, binary.LittleEndian, 12.5)
	binary.Write(&v1, binary.LittleEndian, int64(len(p)))
	binary.Write(&v1, binary.LittleEndian, p)
	if err := os.WriteFile(path, v1.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = loadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Step != 42 || st.Base != 42 || st.Seconds != 12.5 || st.Train != nil || !reflect.DeepEqual(st.Params, p) {
		t.Fatalf("v1 checkpoint read as %+v", st)
	}
	if err := os.WriteFile(path, v1.Bytes()[:v1.Len()-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCheckpoint(path); err == nil {
		t.Error("truncated v1 checkpoint accepted")
	}
}

// writeTinyFashion writes a Fashion-MNIST look-alike of 12×12 images to
// dir: 120 training and 40 test images of 10 classes.
func writeTinyFashion(t *testing.T, dir string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	write := func(name string, dims []int, data []byte) {
		var b bytes.Buffer
		if _, err := (&dataset.IDX{Dims: dims, Data: data}).WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, set := range []struct {
		prefix string
		n      int
	}{{"train", 120}, {"t10k", 40}} {
		px, labels := make([]byte, set.n*12*12), make([]byte, set.n)
		for i := range labels {
			labels[i] = byte(i % 10)
			for j := 0; j < 12*12; j++ {
				// Class-dependent blobs plus noise.
				if (j/12+j%12+int(labels[i]))%5 == 0 {
					px[i*144+j] = byte(150 + rng.IntN(100))
				} else {
					px[i*144+j] = byte(rng.IntN(60))
				}
			}
		}
		write(set.prefix+"-images-idx3-ubyte", []int{set.n, 12, 12}, px)
		write(set.prefix+"-labels-idx1-ubyte", []int{set.n}, labels)
	}
}

// TestResumeEndToEnd runs the program on small synthetic IDX files: one
// run straight through, and one interrupted twice (the second time after a
// resume) and resumed to the end. A single-layer model resumes bit for bit,
// so both record the same accuracies and log-likelihoods.
func TestResumeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	writeTinyFashion(t, dir)
	// Two layers draw hidden feature maps at random: their resume is exact
	// only with the model's random state in the checkpoint.
	for _, layers := range []int{1, 2} {
		t.Run(fmt.Sprintf("layers=%d", layers), func(t *testing.T) {
			opts := func(out string) options {
				o := tinyOptions(dir, out, layers)
				if err := o.validate(); err != nil {
					t.Fatal(err)
				}
				return o
			}
			straight, stopped := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
			if err := run(opts(straight)); err != nil {
				t.Fatal(err)
			}
			defer func() { testInterruptAt = 0 }()
			for _, at := range []int{7, 15, 0} {
				testInterruptAt = at
				err := run(opts(stopped))
				if at != 0 && !errors.Is(err, errInterrupted) || at == 0 && err != nil {
					t.Fatalf("interrupt at %d: %v", at, err)
				}
				if rows, _ := readResults(filepath.Join(stopped, "results.jsonl")); at != 0 && len(rows) != 0 {
					t.Fatalf("interrupted at step %d but a result was recorded", at)
				}
			}
			a, err := readResults(filepath.Join(straight, "results.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := readResults(filepath.Join(stopped, "results.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if len(a) != 1 || len(b) != 1 {
				t.Fatalf("%d and %d result rows", len(a), len(b))
			}
			if a[0].Iters != 24 || b[0].Iters != 24 || a[0].TestAcc != b[0].TestAcc || a[0].TestLL != b[0].TestLL ||
				a[0].TrainAcc != b[0].TrainAcc || a[0].TrainLL != b[0].TrainLL {
				t.Fatalf("interrupted and resumed run %+v, straight run %+v", b[0], a[0])
			}
			// Both runs saved their trained models, which load without
			// the images and are the same.
			var params [2][]float64
			for i, dir := range []string{straight, stopped} {
				m, info, err := convgp.LoadModel(filepath.Join(dir, "tiny.cgp"))
				if err != nil {
					t.Fatal(err)
				}
				if info["pixels"] == "" || info["run"] != "tiny" {
					t.Errorf("the saved model's info %v does not say how the pixels were prepared", info)
				}
				params[i] = make([]float64, m.NumParams())
				m.Params(params[i])
			}
			if !slices.Equal(params[0], params[1]) {
				t.Error("the saved models of the straight and the resumed run differ")
			}
		})
	}
}

// TestTestImagesAsClassify checks that a run with -test N records, to the
// bit, the numbers solvegp classify -first N -samples S gives for its saved
// model on the test files: what classify does (dataset.LoadIDX, the pixel
// standardization of the model file's info, the first N images,
// Deep.Evaluate in batches of 250; cmd/solvegp's TestClassifyFirst checks
// that it does that) is redone here on the model file. A two-layer model
// with several samples, whose numbers depend on the batches drawn.
func TestTestImagesAsClassify(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	writeTinyFashion(t, dir)
	const testN, samples = 25, 3 // of 40 test images
	o := options{model: "solvegp", m: 4, m2: 4, hm: 4, hm2: 4, layers: 2, iters: 10, batch: 16, lr: 0.1, decay: 0.5, decayEvery: 10,
		data: dir, out: out, name: "tiny", checkpoint: 50, trainN: 40, testN: testN, samples: samples, threads: 1, seed: 1,
		whiten: "auto", logEvery: 100, variance: 5, lengthscale: 5, locLengthscale: 3, eps: 1e-3, standardize: true}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	rows, err := readResults(filepath.Join(out, "results.jsonl"))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d result rows, %v", len(rows), err)
	}
	model, info, err := convgp.LoadModel(filepath.Join(out, "tiny.cgp"))
	if err != nil {
		t.Fatal(err)
	}
	im, err := dataset.LoadIDX(filepath.Join(dir, "t10k-images-idx3-ubyte"), filepath.Join(dir, "t10k-labels-idx1-ubyte"), 10)
	if err != nil {
		t.Fatal(err)
	}
	mean, err1 := strconv.ParseFloat(info["pixel_mean"], 64)
	sd, err2 := strconv.ParseFloat(info["pixel_sd"], 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("the model file's info %v", info)
	}
	for i, v := range im.Pixels {
		im.Pixels[i] = (v - mean) / sd
	}
	idx := make([]int, testN)
	for i := range idx {
		idx[i] = i
	}
	if im, err = im.Subset(idx); err != nil {
		t.Fatal(err)
	}
	x, err := im.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	acc, ll, err := model.Evaluate(x, im.FloatLabels(), samples, 250)
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; r.TestN != testN || r.TestAcc != acc || r.TestLL != ll {
		t.Errorf("recorded %d test images, accuracy %v, log-lik %v; the first %d of the file under the saved model: accuracy %v, log-lik %v",
			r.TestN, r.TestAcc, r.TestLL, testN, acc, ll)
	}
}

// tinyOptions are the options of a tiny run on writeTinyFashion's images.
func tinyOptions(data, out string, layers int) options {
	return options{model: "solvegp", m: 4, m2: 4, hm: 4, hm2: 4, layers: layers, iters: 24, batch: 16, lr: 0.1, decay: 0.5, decayEvery: 10,
		data: data, out: out, name: "tiny", checkpoint: 5, trainN: 40, testN: 40, samples: 1, threads: 1, seed: 1,
		whiten: "auto", logEvery: 100, variance: 5, lengthscale: 5, locLengthscale: 3, eps: 1e-3, standardize: true}
}

// TestSettings checks that the settings a checkpoint is matched against
// change with what training computes and not with -iters or output
// options.
func TestSettings(t *testing.T) {
	base := options{model: "solvegp", m: 10, m2: 10, layers: 1, iters: 100, batch: 64, lr: 0.1, seed: 1, out: "a", name: "n"}
	same := base
	same.iters, same.out, same.name, same.threads, same.testN = 500, "b", "m", 2, 100
	if base.settings() != same.settings() {
		t.Errorf("settings differ with -iters and output options:\n%s\n%s", base.settings(), same.settings())
	}
	// Without an output mean the settings are those of runs from before
	// -output-mean existed, whose checkpoints still resume.
	if s := base.settings(); strings.Contains(s, "outputMean") || !strings.HasSuffix(s, " cpuProfile:}") {
		t.Errorf("settings without an output mean: %s", s)
	}
	for _, change := range []func(*options){
		func(o *options) { o.seed = 2 },
		func(o *options) { o.batch = 32 },
		func(o *options) { o.imagesLimit = 600 },
		func(o *options) { o.lr = 0.05 },
		func(o *options) { o.m2 = 20 },
		func(o *options) { o.outputMean = "constant" },
	} {
		o := base
		change(&o)
		if o.settings() == base.settings() {
			t.Errorf("settings %s do not change", o.settings())
		}
	}
}

func TestResultsAppendAndMarkdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	rows := []Result{
		{Name: "b", Model: "solvegp", Layers: 1, M: 100, M2: 100, Iters: 10, Target: 20, TestAcc: 0.8, SecPerIter: 2},
		{Name: "a", Model: "svgp", Layers: 1, M: 100, Iters: 10, Target: 20, TestAcc: 0.7, SecPerIter: 1},
		{Name: "c", Model: "svgp", Layers: 2, M: 100, HiddenM: 32, Iters: 5, Target: 5, TestAcc: 0.9},
	}
	for _, r := range rows {
		if err := appendResult(path, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "b" || got[2].HiddenM != 32 {
		t.Fatalf("read back %+v", got)
	}
	md := markdown(got)
	lines := strings.Split(md, "\n")
	var body []string
	for _, l := range lines {
		if strings.HasPrefix(l, "| 1 ") || strings.HasPrefix(l, "| 2 ") {
			body = append(body, l)
		}
	}
	if len(body) != 3 || !strings.Contains(body[0], "SVGP | 100 |") || !strings.Contains(body[1], "SOLVE-GP | 100+100") ||
		!strings.Contains(body[2], "| 32 |") || !strings.Contains(body[1], "80.00%") {
		t.Errorf("markdown rows:\n%s", strings.Join(body, "\n"))
	}
	// A torn last line (an interrupted append) is ignored, and the next
	// append replaces it.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"name":"x","mod`)
	f.Close()
	if got, err := readResults(path); err != nil || len(got) != 3 {
		t.Fatalf("torn last line: %d rows, %v", len(got), err)
	}
	if err := appendResult(path, Result{Name: "d", Model: "svgp", Layers: 1, M: 5}); err != nil {
		t.Fatal(err)
	}
	if got, err := readResults(path); err != nil || len(got) != 4 || got[3].Name != "d" {
		t.Fatalf("append after a torn line: %+v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readResults(path); err == nil {
		t.Error("malformed results accepted")
	}
}

func TestValidate(t *testing.T) {
	base := options{model: "solvegp", m: 10, m2: 10, hm: 4, hm2: 4, layers: 1, iters: 5, batch: 8, lr: 0.003,
		decay: 0.25, decayEvery: 50000, checkpoint: 1, whiten: "auto", variance: 5, lengthscale: 5, locLengthscale: 3,
		eps: 1e-3, seed: 1, logEvery: 10, samples: 5}
	o := base
	if err := o.validate(); err != nil || o.name != "solvegp-L1-M10+10-it5-b8" {
		t.Fatalf("name %q, err %v", o.name, err)
	}
	o = base
	o.model = "svgp"
	if err := o.validate(); err != nil || o.m2 != 0 || o.name != "svgp-L1-M10-it5-b8" {
		t.Fatalf("svgp: name %q m2 %d err %v", o.name, o.m2, err)
	}
	o = base
	o.lr, o.lengthscale, o.eps, o.standardize = 0.01, 2, 0.01, true
	if err := o.validate(); err != nil || o.name != "solvegp-L1-M10+10-it5-b8-lr0.01-d0.25@50000-k5,2,3-eps0.01-std" {
		t.Fatalf("name %q, err %v", o.name, err)
	}
	for _, mod := range []func(*options){
		func(o *options) { o.model = "x" },
		func(o *options) { o.lengthscale = 0 },
		func(o *options) { o.variance = math.NaN() },
		func(o *options) { o.eps = 1 },
		func(o *options) { o.hiddenInit = -1 },
		func(o *options) { o.layers = 4 },
		func(o *options) { o.m2 = 0 },
		func(o *options) { o.lr = 0 },
		func(o *options) { o.whiten = "maybe" },
		func(o *options) { o.batch = 0 },
		func(o *options) { o.logEvery = 0 },
		func(o *options) { o.threads = -1 },
		func(o *options) { o.decay = 5 },
		func(o *options) { o.imagesLimit = -1 },
		func(o *options) { o.samples = 0 },
		func(o *options) { o.name = "../escape" },
		func(o *options) { o.name = `a\b` },
	} {
		o := base
		mod(&o)
		if err := o.validate(); err == nil {
			t.Errorf("invalid options accepted: %+v", o)
		}
	}
	// Every training setting is in the derived name, so that a run with
	// other settings is not taken for a finished one; settings at their
	// defaults leave the names of earlier runs as they were.
	o = base
	o.seed, o.imagesLimit, o.whiten, o.noTICK = 7, 200, "off", true
	if err := o.validate(); err != nil || o.name != "solvegp-L1-M10+10-it5-b8-whitenoff-notick-n200-seed7" {
		t.Fatalf("name %q, err %v", o.name, err)
	}
	o = base
	o.layers, o.linearMean, o.hiddenVar, o.hiddenInit = 2, true, 0.1, 1e-4
	if err := o.validate(); err != nil || o.name != "solvegp-L2-M10+10-H4+4-it5-b8-hidtrue,0.1,0.0001" {
		t.Fatalf("name %q, err %v", o.name, err)
	}
	if cfg := o.config(28, 28, 1, 10); !cfg.LinearMean || cfg.HiddenVariance != 0.1 || cfg.HiddenInitVar != 1e-4 {
		t.Errorf("hidden options not passed: %+v", cfg)
	}
	o = base
	o.outputMean = "constant"
	if err := o.validate(); err != nil || !strings.HasSuffix(o.name, "-omconstant") {
		t.Fatalf("name %q, err %v", o.name, err)
	}
	if cfg := o.config(28, 28, 1, 10); cfg.OutputMean != "constant" {
		t.Errorf("output mean not passed: %+v", cfg)
	}
	// Table 7 configurations adapted to 28×28 inputs.
	o = base
	o.layers = 3
	cfg := o.config(28, 28, 1, 10)
	if len(cfg.Hidden) != 2 || cfg.Hidden[1].Stride != 2 || cfg.Output.PatchHeight != 5 || cfg.Whiten {
		t.Errorf("3-layer config %+v", cfg)
	}
	o.layers = 1
	if cfg := o.config(28, 28, 1, 10); !cfg.Whiten || !cfg.Output.TICK || len(cfg.Hidden) != 0 {
		t.Errorf("1-layer config %+v", cfg)
	}
}

func TestStandardize(t *testing.T) {
	tr := &dataset.Images{N: 2, Height: 1, Width: 2, Channels: 1, Pixels: []float64{0, 1, 1, 0}, Labels: []int{0, 1}, Classes: 2}
	te := &dataset.Images{N: 1, Height: 1, Width: 2, Channels: 1, Pixels: []float64{0.5, 1}, Labels: []int{1}, Classes: 2}
	standardize(tr, te)
	want := []float64{-1, 1, 1, -1}
	for i, v := range tr.Pixels {
		if math.Abs(v-want[i]) > 1e-15 {
			t.Fatalf("train pixels %v, want %v", tr.Pixels, want)
		}
	}
	if te.Pixels[0] != 0 || math.Abs(te.Pixels[1]-1) > 1e-15 {
		t.Errorf("test pixels %v, want [0 1]", te.Pixels)
	}
}

func TestWriteTable(t *testing.T) {
	dir := t.TempDir()
	if err := appendResult(filepath.Join(dir, "results.jsonl"), Result{Name: "run-x", Model: "svgp", Layers: 1, M: 7}); err != nil {
		t.Fatal(err)
	}
	if err := writeTable(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil || !strings.Contains(string(b), "| SVGP | 7 |") || !strings.Contains(string(b), "| run-x |") {
		t.Errorf("results.md:\n%s (err %v)", b, err)
	}
}

// TestImageCountsInRange: -train-images and -test beyond the images there
// are is an error naming the flag, its value and the number of images, not
// a silent cap under a name that says otherwise; the sizes themselves are
// fine.
func TestImageCountsInRange(t *testing.T) {
	dir := t.TempDir()
	writeTinyFashion(t, dir) // 120 training and 40 test images
	for _, tc := range []struct {
		set  func(*options)
		want []string
	}{
		{func(o *options) { o.imagesLimit = 121 }, []string{"-train-images 121", "120"}},
		{func(o *options) { o.testN = 41 }, []string{"-test 41", "40"}},
	} {
		o := tinyOptions(dir, filepath.Join(t.TempDir(), "out"), 1)
		o.name, o.iters = "", 2
		tc.set(&o)
		err := run(o)
		if err == nil {
			t.Errorf("%s: no error", tc.want[0])
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not name %q", err, w)
			}
		}
		if _, serr := os.Stat(filepath.Join(o.out, "results.jsonl")); serr == nil {
			t.Errorf("%s: a result was recorded", tc.want[0])
		}
	}
	o := tinyOptions(dir, filepath.Join(t.TempDir(), "out"), 1)
	o.imagesLimit, o.testN, o.iters = 120, 40, 2
	if err := run(o); err != nil {
		t.Errorf("the whole sets: %v", err)
	}
}

// TestEvaluationChanged: a finished run asked again with another -test,
// -train-eval or (for a deep model) -samples is not skipped with the stored
// numbers: its saved model is evaluated as asked, and a row with the new
// evaluation is appended, with the numbers a run evaluated so from the
// start records. The same request again is skipped. Without the saved
// model, the error names both evaluations and what to do.
func TestEvaluationChanged(t *testing.T) {
	dir := t.TempDir()
	writeTinyFashion(t, dir)
	for _, layers := range []int{1, 2} {
		t.Run(fmt.Sprintf("layers=%d", layers), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			opts := func(out string, testN, trainN, samples int) options {
				o := tinyOptions(dir, out, layers)
				o.iters, o.testN, o.trainN, o.samples = 10, testN, trainN, samples
				if err := o.validate(); err != nil {
					t.Fatal(err)
				}
				return o
			}
			rows := func(out string) []Result {
				t.Helper()
				r, err := readResults(filepath.Join(out, "results.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			if err := run(opts(out, 20, 30, 1)); err != nil {
				t.Fatal(err)
			}
			type ask struct{ testN, trainN, samples int }
			asks := []ask{{40, 30, 1}, {0, 40, 1}}
			if layers > 1 {
				asks = append(asks, ask{40, 30, 2})
			}
			for i, a := range asks {
				if err := run(opts(out, a.testN, a.trainN, a.samples)); err != nil {
					t.Fatalf("%+v: %v", a, err)
				}
				got := rows(out)
				if len(got) != 2+i {
					t.Fatalf("%+v: %d rows, want %d", a, len(got), 2+i)
				}
				// A run evaluated so from the start.
				fresh := filepath.Join(t.TempDir(), "fresh")
				if err := run(opts(fresh, a.testN, a.trainN, a.samples)); err != nil {
					t.Fatal(err)
				}
				r, w := got[len(got)-1], rows(fresh)[0]
				if !r.Reevaluated || w.Reevaluated || r.TestN != w.TestN || r.TrainN != w.TrainN || r.Samples != w.Samples ||
					r.TestAcc != w.TestAcc || r.TestLL != w.TestLL || r.TrainAcc != w.TrainAcc || r.TrainLL != w.TrainLL ||
					r.Iters != w.Iters || r.Name != w.Name || r.SecPerIter != got[0].SecPerIter {
					t.Errorf("%+v: re-evaluated row %+v, fresh run's %+v", a, r, w)
				}
			}
			if md, err := os.ReadFile(filepath.Join(out, "results.md")); err != nil || !strings.Contains(string(md), "| tiny (40 test images) |") ||
				!strings.Contains(string(md), "| tiny (20 test images) |") {
				t.Errorf("results.md does not tell the evaluations apart:\n%s", md)
			}
			// Asked again (and the first evaluation too): skipped.
			n := len(rows(out))
			for _, a := range append(asks, ask{20, 30, 1}) {
				if err := run(opts(out, a.testN, a.trainN, a.samples)); err != nil {
					t.Fatal(err)
				}
			}
			if got := len(rows(out)); got != n {
				t.Errorf("repeated requests added %d rows", got-n)
			}
			// Asked again without the data: skipped as before, without
			// reading the images.
			empty := t.TempDir()
			o := opts(out, 20, 30, 1)
			o.data = empty
			if err := run(o); err != nil {
				t.Errorf("a finished run asked again without its data: %v", err)
			}
			// Without the saved model: an error naming both evaluations.
			if err := os.Remove(filepath.Join(out, "tiny.cgp")); err != nil {
				t.Fatal(err)
			}
			err := run(opts(out, 30, 30, 1))
			if err == nil {
				t.Fatal("no error without the saved model")
			}
			for _, w := range []string{"30 test images", "20 test images", "tiny.cgp", "results.jsonl"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestSettingsMismatch: resuming a checkpoint with other training settings
// is refused with an error that names the flags that differ, each with the
// checkpoint's value and the one asked for, and nothing else.
func TestSettingsMismatch(t *testing.T) {
	dir := t.TempDir()
	writeTinyFashion(t, dir)
	out := filepath.Join(t.TempDir(), "out")
	o := tinyOptions(dir, out, 1)
	testInterruptAt = 7
	err := run(o)
	testInterruptAt = 0
	if !errors.Is(err, errInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	o.lr, o.batch, o.standardize = 0.05, 8, false
	err = run(o)
	if err == nil {
		t.Fatal("a checkpoint resumed with other settings")
	}
	msg := err.Error()
	for _, w := range []string{"tiny.ckpt", "-lr 0.1 (asked: 0.05)", "-batch 16 (asked: 8)", "-standardize true (asked: false)"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
	for _, not := range []string{"eps", "variance", "{", "seed"} {
		if strings.Contains(msg, not) {
			t.Errorf("error %q names %q, which did not change", msg, not)
		}
	}
	// A setting recorded on one side only (a checkpoint from before it
	// existed) is named too.
	if d := settingsDiff("{model:svgp m:5}", "{model:svgp m:5 noTICK:true}"); d != "-no-tick (not recorded) (asked: true)" {
		t.Errorf("settingsDiff: %q", d)
	}
}
