package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/convgp"
	"github.com/solvegp/solvegp/convgp/dataset"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

// optionalFloat is a float flag that records whether it was given.
type optionalFloat struct {
	v   float64
	set bool
}

func (f *optionalFloat) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

func (f *optionalFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	f.v, f.set = v, true
	return nil
}

// classifyMetrics are the results of classify on labelled images.
type classifyMetrics struct {
	N        int     `json:"n"`
	Accuracy float64 `json:"accuracy"`
	// LogLik is the mean log predictive probability of the labels.
	LogLik  float64 `json:"log_lik"`
	Samples int     `json:"samples"`
}

// pixelScaling returns the standardization of pixels the model was trained
// with: the flags when given, else the model file's pixel_mean and pixel_sd
// (bench/convgp writes them), else none (mean 0, sd 1). A file that does not
// record how its pixels were prepared (no "pixels" key, as in bench/convgp's
// files before it recorded them) and gets no flags is used without
// standardization, with a warning. The flags' values are checked by
// checkPixelFlags; an error about the file's values names modelPath.
func pixelScaling(modelPath string, info map[string]string, mean, sd optionalFloat) (float64, float64, error) {
	get := func(flagName, key string, f optionalFloat, def float64, ok func(float64) bool, want string) (float64, error) {
		if f.set {
			return f.v, nil
		}
		s, present := info[key]
		if !present {
			return def, nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: the model file's info %s %q is not a number (give -%s)", modelPath, key, s, flagName)
		}
		if !ok(v) {
			return 0, fmt.Errorf("%s: the model file's info %s %q: must be %s (give -%s)", modelPath, key, s, want, flagName)
		}
		return v, nil
	}
	m, err := get("pixel-mean", "pixel_mean", mean, 0, meanOK, "finite")
	if err != nil {
		return 0, 0, err
	}
	s, err := get("pixel-sd", "pixel_sd", sd, 1, sdOK, "positive and finite")
	if err != nil {
		return 0, 0, err
	}
	return m, s, nil
}

func meanOK(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
func sdOK(v float64) bool   { return v > 0 && !math.IsInf(v, 0) }

// checkPixelFlags checks the values of -pixel-mean and -pixel-sd, if
// given, and names the flag of a wrong one.
func checkPixelFlags(mean, sd optionalFloat) error {
	if mean.set && !meanOK(mean.v) {
		return fmt.Errorf("-pixel-mean %g: must be finite", mean.v)
	}
	if sd.set && !sdOK(sd.v) {
		return fmt.Errorf("-pixel-sd %g: must be positive and finite", sd.v)
	}
	return nil
}

// loadImages reads the images to classify in the given format and checks
// them against the model's configuration: for IDX files the header first,
// so that a file of the wrong size is refused before its data is read.
// Labels are read when a label file is given or the format holds them
// (cifar10), unless ignoreLabels. If first > 0, only the first `first`
// images are kept, as bench/convgp -test keeps its test images; asking for
// more images than there are is an error rather than a silent "all".
func loadImages(format string, paths []string, labels string, ignoreLabels bool, first int, cfg convgp.DeepConfig) (*dataset.Images, error) {
	shapeErr := func(h, w, c int) error {
		return fmt.Errorf("%s: images are %d×%d×%d (height×width×channels), the model takes %d×%d×%d",
			paths[0], h, w, c, cfg.Height, cfg.Width, cfg.Channels)
	}
	var im *dataset.Images
	var err error
	switch format {
	case "idx":
		dims, err := dataset.IDXDims(paths[0])
		if err != nil {
			return nil, err
		}
		if len(dims) != 3 {
			return nil, fmt.Errorf("%s: IDX dimensions %v, want 3 (images, rows, columns)", paths[0], dims)
		}
		if dims[1] != cfg.Height || dims[2] != cfg.Width || cfg.Channels != 1 {
			return nil, shapeErr(dims[1], dims[2], 1)
		}
		if labels != "" {
			// IDX labels are bytes: a model with more classes takes them all.
			im, err = dataset.LoadIDX(paths[0], labels, min(cfg.Classes, 256))
		} else {
			im, err = dataset.LoadIDXImages(paths[0])
		}
		if err != nil {
			return nil, err
		}
	case "cifar10":
		if im, err = dataset.LoadCIFAR10(paths...); err != nil {
			return nil, err
		}
		if im.Height != cfg.Height || im.Width != cfg.Width || im.Channels != cfg.Channels {
			return nil, shapeErr(im.Height, im.Width, im.Channels)
		}
	default:
		return nil, fmt.Errorf("-format %q: want idx or cifar10", format)
	}
	if im.N == 0 {
		return nil, fmt.Errorf("%s: no images", paths[0])
	}
	if ignoreLabels {
		im.Labels, im.Classes = nil, 0
	}
	if first > im.N {
		return nil, fmt.Errorf("-first %d: there are only %d images (%s)", first, im.N, strings.Join(paths, ", "))
	}
	if first > 0 && first < im.N {
		im.N, im.Pixels = first, im.Pixels[:first*im.ImageSize()]
		if im.Labels != nil {
			im.Labels = im.Labels[:first]
		}
	}
	for i, l := range im.Labels {
		if l >= cfg.Classes {
			return nil, fmt.Errorf("%s: label %d of image %d is not one of the model's %d classes (-ignore-labels classifies the images without them)", paths[0], l, i, cfg.Classes)
		}
	}
	return im, nil
}

// testHookBeforePredict, if set, runs after classify has read its inputs
// and before it predicts.
var testHookBeforePredict func()

// classifyDescription is classify's help text.
const classifyDescription = `Classifies images with a convolutional GP model file (written by bench/convgp
as <out>/<name>.cgp, or by convgp.SaveModel). Images are an IDX file (MNIST,
Fashion-MNIST; -format idx) or CIFAR-10 binary batches (-format cifar10), each
optionally gzip-compressed, of the size the model was trained on. Pixels are
scaled to [0, 1] and then standardized as (v − pixel_mean) / pixel_sd with the
values in the model file's info (bench/convgp -standardize records them), or
with -pixel-mean and -pixel-sd.

With labels (-labels for IDX images; CIFAR-10 files hold theirs, which
-ignore-labels drops) it prints the accuracy and the mean test log-likelihood,
as bench/convgp computes them: with the same -samples and the default -batch
(bench/convgp evaluates in batches of 250; its own -batch is the training
batch) the numbers for its test set are the same. Class probabilities are written
as CSV to -out (the results then go to standard error if -out is -), with the columns
  p_0..p_{C-1}, class[, label]
(class is the most probable one). Deep models average their probabilities over
-samples draws of the hidden feature maps, from the model's seed, so a run
repeats exactly; the draws are made batch by batch, so that their numbers
depend on -batch (and on which images are classified) too.

-first N classifies only the first N images of the file(s) (an error if there
are fewer), which are
bench/convgp's test images for a run with -test N: with its -samples and the
default -batch, the numbers are the ones it reports for them. (Classifying
all the images and keeping the first N rows draws the samples of other
batches, and gives other numbers for deep models.)`

func runClassify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("classify", "-model model.cgp [flags] images.idx | cifar10-batch.bin...",
		classifyDescription, stderr)
	modelPath := fs.String("model", "model.cgp", "convolutional model file")
	labels := fs.String("labels", "", "IDX label file for IDX images")
	format := fs.String("format", "idx", "image file format: idx or cifar10")
	out := fs.String("out", "", "CSV file of class probabilities, - for standard output (default: standard output without labels, no file with them)")
	samples := fs.Int("samples", 5, "Monte Carlo samples through the hidden layers of deep models")
	batch := fs.Int("batch", 250, "images per prediction batch (deep models draw their samples per batch; bench/convgp evaluates with 250)")
	ignoreLabels := fs.Bool("ignore-labels", false, "classify CIFAR-10 images without their labels (no accuracy); not with -labels")
	first := fs.Int("first", 0, "classify only the first N images (0: all), as bench/convgp -test N evaluates its test images")
	threads := fs.Int("threads", 0, "goroutines per linear-algebra call (0: all CPUs)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	var pixelMean, pixelSD optionalFloat
	fs.Var(&pixelMean, "pixel-mean", "pixel mean to subtract after scaling to [0, 1] (default: the model file's pixel_mean, or 0)")
	fs.Var(&pixelSD, "pixel-sd", "pixel standard deviation to divide by (default: the model file's pixel_sd, or 1)")
	if done, code := parse(fs, args); done {
		return code
	}
	if misplacedFlag(fs, args, "the image files") {
		return exitUsage
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(stderr, "solvegp classify: need an image file (see solvegp classify -h)")
		return exitUsage
	}
	if *format == "idx" && fs.NArg() > 1 {
		fmt.Fprintf(stderr, "solvegp classify: -format idx takes one image file, got %d (see solvegp classify -h)\n", fs.NArg())
		return exitUsage
	}
	if *ignoreLabels && *labels != "" {
		fmt.Fprintln(stderr, "solvegp classify: -labels and -ignore-labels contradict each other: give -labels for accuracy, or leave it out to classify without labels (see solvegp classify -h)")
		return exitUsage
	}
	if *format == "cifar10" && *labels != "" {
		return fail(stderr, "classify", fmt.Errorf("-labels: CIFAR-10 files hold their labels"))
	}
	if *samples < 1 || *batch < 1 {
		return fail(stderr, "classify", fmt.Errorf("-samples %d and -batch %d: must be ≥ 1", *samples, *batch))
	}
	if *first < 0 {
		return fail(stderr, "classify", fmt.Errorf("-first %d: must be ≥ 0 (0: all the images)", *first))
	}
	if err := checkPixelFlags(pixelMean, pixelSD); err != nil {
		return fail(stderr, "classify", err)
	}
	// -out must not overwrite an input; the inputs may repeat.
	outFile := namedFile{what: "-out", path: *out, stdio: true}
	inputs := []namedFile{{what: "-model", path: *modelPath}, {what: "-labels", path: *labels}}
	for _, p := range fs.Args() {
		inputs = append(inputs, namedFile{what: "the image file", path: p})
	}
	for _, in := range inputs {
		if err := distinctFiles(in, outFile); err != nil {
			return fail(stderr, "classify", err)
		}
	}
	if err := writableDir(outFile); err != nil {
		return fail(stderr, "classify", err)
	}
	// The work runs in interruptible's goroutine, which an interruption
	// leaves behind: it writes only these, read once it has returned.
	var (
		model   *convgp.Deep
		im      *dataset.Images
		probs   *mat.Dense
		warning string
	)
	err := interruptible(ctx, func() error {
		var info map[string]string
		var err error
		if model, info, err = convgp.LoadModel(*modelPath); err != nil {
			return wrongFile(*modelPath, kindConv, err)
		}
		if err := model.SetThreads(*threads); err != nil {
			return err
		}
		_, described := info["pixels"]
		_, standardized := info["pixel_mean"]
		if !described && !standardized && !(pixelMean.set && pixelSD.set) {
			warning = fmt.Sprintf("solvegp classify: warning: %s does not record how its pixels were prepared; using them in [0, 1] unless -pixel-mean and -pixel-sd say otherwise\n", *modelPath)
		}
		mean, sd, err := pixelScaling(*modelPath, info, pixelMean, pixelSD)
		if err != nil {
			return err
		}
		if im, err = loadImages(*format, fs.Args(), *labels, *ignoreLabels, *first, model.Config()); err != nil {
			return err
		}
		for i, v := range im.Pixels {
			im.Pixels[i] = (v - mean) / sd
		}
		if testHookBeforePredict != nil {
			testHookBeforePredict()
		}
		x, err := im.Matrix()
		if err != nil {
			return err
		}
		probs, err = model.Predict(x, *samples, *batch)
		return err
	})
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "solvegp classify: interrupted; nothing written")
		return exitInterrupted
	}
	fmt.Fprint(stderr, warning)
	if err != nil {
		return fail(stderr, "classify", err)
	}
	if *out == "" && im.Labels == nil {
		*out = "-"
	}
	if err := saveClassProbs(*out, stdout, probs, im.Labels); err != nil {
		return fail(stderr, "classify", err)
	}
	if im.Labels == nil {
		return exitOK
	}
	m := classifyMetrics{N: im.N, Samples: *samples}
	if model.NumLayers() == 1 {
		m.Samples = 1 // a single layer draws nothing
	}
	if m.Accuracy, m.LogLik, err = convgp.Score(probs, im.Labels); err != nil {
		return fail(stderr, "classify", err)
	}
	if *out == "-" {
		stdout = stderr // standard output holds the CSV
	}
	if err := writeClassifyMetrics(stdout, m, *asJSON); err != nil {
		return fail(stderr, "classify", err)
	}
	return exitOK
}

// saveClassProbs writes the class probabilities as CSV to out: a file,
// "-" for stdout, or nowhere if out is empty.
func saveClassProbs(out string, stdout io.Writer, probs *mat.Dense, labels []int) error {
	if out == "" {
		return nil
	}
	var buf bytes.Buffer
	writeClassProbs(&buf, probs, labels)
	if out == "-" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return atomicfile.WriteFile(out, buf.Bytes(), 0o644)
}

// writeClassifyMetrics prints classify's accuracy and log-likelihood as
// indented JSON or as text.
func writeClassifyMetrics(w io.Writer, m classifyMetrics, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}
	fmt.Fprintf(w, "n          %d\n", m.N)
	fmt.Fprintf(w, "accuracy   %.6g\n", m.Accuracy)
	fmt.Fprintf(w, "log-lik    %.6g (mean per image)\n", m.LogLik)
	return nil
}

// argmax returns the index of the largest value of v, the first of equal
// ones: the class convgp.Score counts as predicted.
func argmax(v []float64) int {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// writeClassProbs writes the class probabilities, the most probable class
// and, if known, the label of every image as CSV.
func writeClassProbs(w *bytes.Buffer, probs *mat.Dense, labels []int) {
	n, c := probs.Dims()
	for j := 0; j < c; j++ {
		fmt.Fprintf(w, "p_%d,", j)
	}
	w.WriteString("class")
	if labels != nil {
		w.WriteString(",label")
	}
	w.WriteString("\n")
	for i := 0; i < n; i++ {
		row := probs.RawRowView(i)
		for _, p := range row {
			w.WriteString(strconv.FormatFloat(p, 'g', -1, 64))
			w.WriteByte(',')
		}
		w.WriteString(strconv.Itoa(argmax(row)))
		if labels != nil {
			w.WriteString("," + strconv.Itoa(labels[i]))
		}
		w.WriteString("\n")
	}
}
