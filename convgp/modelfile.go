package convgp

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unicode/utf8"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/internal/atomicfile"
	"github.com/solvegp/solvegp/patches"
)

// ModelFormat is the "format" field that identifies a convolutional model
// file (SaveModel).
const ModelFormat = "solvegp-convgp-model"

// ModelVersion is the model-file version this package writes. It reads
// files of this version and older ones.
const ModelVersion = 2

// outputMeanVersion is the first model-file version whose configuration
// may have an OutputMean.
const outputMeanVersion = 2

// MaxModelParams bounds the parameter count of a model file ReadModel
// accepts (2²⁸ values, 2 GiB), and so of a model NewDeep builds. The
// paper's single-layer SOLVE-GP 1000 + 1000 has about 10⁷. ReadModel
// computes the parameter count of the file's configuration from its sizes
// and compares it with the file's before it builds anything, so the memory
// it takes grows with the file's size (plus at most the TICK location
// tables, see MaxTICKPatches).
const MaxModelParams = 1 << 28

// ErrModelFile is wrapped by the errors of ReadModel and LoadModel about
// input that is not a valid model file.
var ErrModelFile = errors.New("convgp: invalid model file")

// modelHeader is a model file's first line.
type modelHeader struct {
	Format  string     `json:"format"`
	Version int        `json:"version"`
	Config  DeepConfig `json:"config"`
	// Params is the number of parameters that follow the header, and
	// SHA256 the hex digest of their bytes.
	Params int    `json:"params"`
	SHA256 string `json:"sha256"`
	// Info holds the caller's free-form notes (SaveModel's info).
	Info map[string]string `json:"info,omitempty"`
}

// SaveModel writes d to path with atomicfile.Write: a regular file is
// replaced atomically, so that on any error an existing file at path is
// left as it was, and keeps its mode; a symbolic link is written through
// and a device or FIFO written directly. The file holds a
// JSON line with the model's DeepConfig, its parameter count, the SHA-256
// of the parameters and info, then the parameters as little-endian float64
// values (docs/model-format.md). info holds free-form notes, nil or valid
// UTF-8 (an empty map reads back as nil); it is the place for what a user of
// the model must know that the model does not hold, such as how the images
// were preprocessed. Models whose configuration ReadModel would refuse
// (images of more than 2²² values; NewDeep refuses more than
// MaxModelParams parameters) are not saved.
// LoadModel rebuilds the model from the file without the training images,
// with the saved configuration (its thread budget, DeepConfig.Threads,
// included). The Monte Carlo generator's state is not saved: a loaded model
// draws from DeepConfig.Seed, and its predictions use their own generator
// anyway.
func SaveModel(path string, d *Deep, info map[string]string) error {
	if d == nil {
		return fmt.Errorf("%w: nil model", ErrConfig)
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return WriteModel(w, d, info) })
}

// WriteModel writes d and info to w in the format of SaveModel.
func WriteModel(w io.Writer, d *Deep, info map[string]string) error {
	if d == nil {
		return fmt.Errorf("%w: nil model", ErrConfig)
	}
	for k, v := range info {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("%w: model info %q is not valid UTF-8", ErrConfig, k)
		}
	}
	// What ReadModel would refuse is not written.
	if n, err := paramCount(d.cfg); err != nil {
		return fmt.Errorf("%w: this model cannot be saved: its configuration would not load: %w", ErrConfig, err)
	} else if n != d.NumParams() {
		return fmt.Errorf("convgp: WriteModel: the configuration has %d parameters, not the %d computed", d.NumParams(), n)
	}
	p := make([]float64, d.NumParams())
	d.Params(p)
	buf := make([]byte, 8*len(p))
	for i, v := range p {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
	}
	sum := sha256.Sum256(buf)
	head, err := json.Marshal(modelHeader{Format: ModelFormat, Version: ModelVersion, Config: d.cfg, Params: len(p),
		SHA256: hex.EncodeToString(sum[:]), Info: info})
	if err != nil {
		return err
	}
	if len(head) >= maxModelHeader {
		return fmt.Errorf("%w: the model's header would take %d bytes, more than %d (is info large?)", ErrConfig, len(head)+1, maxModelHeader)
	}
	if _, err := w.Write(append(head, '\n')); err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// LoadModel reads a model written by SaveModel and its info (nil if it had
// none).
func LoadModel(path string) (*Deep, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	d, info, err := ReadModel(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, info, nil
}

// maxModelHeader bounds the length of a model file's header line.
const maxModelHeader = 64 << 10

// ReadModel reads a model and its info in the format of SaveModel from r,
// which must hold nothing after it. Input that is not such a model is an error
// wrapping ErrModelFile; when the package refuses the file's configuration
// or parameters, the error also wraps the refusal (ErrConfig, for
// instance). A failure to read r is returned as such.
func ReadModel(r io.Reader) (*Deep, map[string]string, error) {
	br := bufio.NewReaderSize(r, maxModelHeader)
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull):
		return nil, nil, fmt.Errorf("%w: no header line of at most %d bytes", ErrModelFile, maxModelHeader)
	case err != nil:
		return nil, nil, fmt.Errorf("convgp: reading a model: %w", err)
	}
	// The format and version first, so that a newer file is reported as
	// such rather than by the fields this version does not know.
	var id struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(line, &id); err != nil {
		return nil, nil, fmt.Errorf("%w: header: %v", ErrModelFile, err)
	}
	switch {
	case id.Format != ModelFormat:
		return nil, nil, fmt.Errorf("%w: format %q, want %q", ErrModelFile, id.Format, ModelFormat)
	case id.Version < 1 || id.Version > ModelVersion:
		return nil, nil, fmt.Errorf("%w: version %d; this package reads versions 1 to %d", ErrModelFile, id.Version, ModelVersion)
	}
	var h modelHeader
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, nil, fmt.Errorf("%w: header: %v", ErrModelFile, err)
	}
	if h.Version < outputMeanVersion && h.Config.OutputMean != "" {
		return nil, nil, fmt.Errorf("%w: an output mean needs version %d, the file has version %d", ErrModelFile, outputMeanVersion, h.Version)
	}
	if h.Params < 1 || h.Params > MaxModelParams {
		return nil, nil, fmt.Errorf("%w: %d parameters (at most %d)", ErrModelFile, h.Params, MaxModelParams)
	}
	// The configuration's parameter count, from its sizes alone, before
	// anything is allocated for it.
	if n, err := paramCount(h.Config); err != nil {
		return nil, nil, err
	} else if n != h.Params {
		return nil, nil, fmt.Errorf("%w: %d parameters for a configuration that has %d", ErrModelFile, h.Params, n)
	}
	// Read what is there (at most one byte more than announced), so that
	// memory grows with the input, not with what the header claims.
	buf, err := io.ReadAll(io.LimitReader(br, 8*int64(h.Params)+1))
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("convgp: reading a model's parameters: %w", err)
	case len(buf) < 8*h.Params:
		return nil, nil, fmt.Errorf("%w: %d parameters announced, %d bytes follow", ErrModelFile, h.Params, len(buf))
	case len(buf) > 8*h.Params:
		return nil, nil, fmt.Errorf("%w: data after the %d parameters", ErrModelFile, h.Params)
	}
	if sum := sha256.Sum256(buf); hex.EncodeToString(sum[:]) != h.SHA256 {
		return nil, nil, fmt.Errorf("%w: the parameters do not match their SHA-256", ErrModelFile)
	}
	p := make([]float64, h.Params)
	for i := range p {
		p[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
	}
	d, err := newDeep(nil, h.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrModelFile, err)
	}
	if d.NumParams() != h.Params { // paramCount disagrees with the layout: a bug
		return nil, nil, fmt.Errorf("convgp: ReadModel: the configuration has %d parameters, not the %d computed", d.NumParams(), h.Params)
	}
	if err := d.SetParams(p); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrModelFile, err)
	}
	return d, h.Info, nil
}

// maxModelImage bounds the values per image of a model file's
// configuration (a 2048×2048 image): the patch tables built before the
// parameters are set grow with it.
const maxModelImage = 1 << 22

// paramCount returns the number of parameters of the model cfg describes,
// computed from the sizes alone, with nothing allocated: the layout of
// every layer's gp model (kernel, inducing points, and per latent function
// a mean and a packed triangle for q(u), and for SOLVE-GP for q(v⊥)), the
// output kernel's patch weights, the hidden layers' linear means and the
// output layer's mean. It
// refuses images of more than maxModelImage values and more than
// MaxModelParams parameters. An error wraps ErrModelFile. TestParamCount
// checks it against NumParams.
func paramCount(cfg DeepConfig) (int, error) {
	if cfg.Height < 1 || cfg.Width < 1 || cfg.Channels < 1 ||
		float64(cfg.Height)*float64(cfg.Width)*float64(cfg.Channels) > maxModelImage {
		return 0, fmt.Errorf("%w: images %d×%d×%d (at most %d values)", ErrModelFile, cfg.Height, cfg.Width, cfg.Channels, maxModelImage)
	}
	return countParams(cfg, ErrModelFile)
}

// countParams is paramCount without its bound on the image size, for
// images of at least one value; its errors wrap kind. NewDeep calls it
// with ErrConfig, so that it refuses, before it allocates anything, the
// sizes a model file may not have: more than MaxModelParams parameters, or
// sizes that overflow int.
func countParams(cfg DeepConfig, kind error) (int, error) {
	bad := func(format string, a ...any) (int, error) {
		return 0, fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, a...))
	}
	if cfg.Kind != gp.SVGP && cfg.Kind != gp.SOLVEGP {
		return bad("kind %v", cfg.Kind)
	}
	// Sums in float64 of non-negative terms (every size is capped at
	// MaxModelParams before it enters one), exact below 2⁵³; a total above
	// MaxModelParams is refused.
	tri := func(m int) float64 { return float64(m) + float64(m)*float64(m+1)/2 } // a mean and a packed triangle
	var total float64
	// layer adds a gp model's parameters; pl is its patch length (the
	// inducing points' dimension), kp its kernel's parameters.
	layer := func(what string, m, m2, pl, latent int, kp float64) error {
		if cfg.Kind == gp.SVGP {
			m2 = 0
		}
		// Each of these alone implies at least as many parameters; the cap
		// also keeps the int arithmetic below from overflowing.
		if m > MaxModelParams || m2 > MaxModelParams || latent > MaxModelParams {
			return fmt.Errorf("%w: %s: M = %d, M2 = %d, %d latent functions: more than %d parameters", kind, what, m, m2, latent, MaxModelParams)
		}
		if why := sizeProblem(cfg.Kind, m, m2, latent); why != "" {
			return fmt.Errorf("%w: %s: M = %d, M2 = %d, %d latent functions: %s", kind, what, m, m2, latent, why)
		}
		total += kp + float64(m+m2)*float64(pl) + float64(latent)*(tri(m)+tri(m2))
		return nil
	}
	geom := func(what string, h, w, c, ph, pw, stride int) (oh, ow, pl int, err error) {
		if stride == 0 {
			stride = 1
		}
		oh, _, _, err = patches.OutputSize(h, ph, stride, 1, patches.Valid, 0, 0)
		if err == nil {
			ow, _, _, err = patches.OutputSize(w, pw, stride, 1, patches.Valid, 0, 0)
		}
		if err != nil {
			return 0, 0, 0, fmt.Errorf("%w: %s: %w", kind, what, err)
		}
		// One inducing patch alone must fit (ph ≤ h and pw ≤ w, but the
		// image is not bounded here).
		if float64(ph)*float64(pw)*float64(c) > MaxModelParams {
			return 0, 0, 0, fmt.Errorf("%w: %s: patches of %d×%d×%d values: more than %d parameters", kind, what, ph, pw, c, MaxModelParams)
		}
		return oh, ow, ph * pw * c, nil
	}
	h, w, c := cfg.Height, cfg.Width, cfg.Channels
	for i, hs := range cfg.Hidden {
		what := fmt.Sprintf("hidden layer %d", i)
		oh, ow, pl, err := geom(what, h, w, c, hs.PatchHeight, hs.PatchWidth, hs.Stride)
		if err != nil {
			return 0, err
		}
		if err := layer(what, hs.M, hs.M2, pl, hs.Channels, 2); err != nil { // RBF: variance, lengthscale
			return 0, err
		}
		if cfg.LinearMean {
			total += float64(pl) * float64(hs.Channels)
		}
		if total > MaxModelParams {
			return bad("more than %d parameters", MaxModelParams)
		}
		h, w, c = oh, ow, hs.Channels
	}
	out := cfg.Output
	oh, ow, pl, err := geom("output layer", h, w, c, out.PatchHeight, out.PatchWidth, out.Stride)
	if err != nil {
		return 0, err
	}
	kp := 2 + float64(oh)*float64(ow) // variance, lengthscale, a weight per patch
	if out.TICK {
		kp++ // location lengthscale
		pl += 2
	}
	if err := layer("output layer", out.M, out.M2, pl, cfg.Classes, kp); err != nil {
		return 0, err
	}
	switch cfg.OutputMean { // per class
	case "":
	case "constant":
		total += float64(cfg.Classes)
	case "linear":
		total += float64(cfg.Classes) * (float64(h)*float64(w)*float64(c) + 1)
	default:
		return bad("output mean %q (want constant or linear)", cfg.OutputMean)
	}
	if total > MaxModelParams {
		return bad("more than %d parameters", MaxModelParams)
	}
	return int(total), nil
}
