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

	"github.com/solvegp/solvegp/gp/modelfile"
)

// ModelFormat is the "format" field that identifies a convolutional model
// file (SaveModel).
const ModelFormat = "solvegp-convgp-model"

// ModelVersion is the model-file version this package writes. It reads
// files of this version and older ones.
const ModelVersion = 1

// MaxModelParams bounds the parameter count of a model file ReadModel
// accepts (2²⁸ values, 2 GiB), so that a damaged or hostile file cannot
// exhaust memory. The paper's single-layer SOLVE-GP 1000 + 1000 has about
// 10⁷.
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
}

// SaveModel writes d to path atomically: into a temporary file in the same
// directory, synced, then renamed over path (modelfile.WriteAtomic), so that
// on any error an existing file at path is left as it was. The file holds a
// JSON line with the model's DeepConfig, its parameter count and the SHA-256
// of the parameters, then the parameters as little-endian float64 values;
// LoadModel rebuilds the model from it without the training images, with
// the saved configuration (its thread budget, DeepConfig.Threads,
// included). The Monte Carlo generator's state is not saved: a loaded model
// draws from DeepConfig.Seed, and its predictions use their own generator
// anyway.
func SaveModel(path string, d *Deep) error {
	if d == nil {
		return fmt.Errorf("%w: nil model", ErrConfig)
	}
	return modelfile.WriteAtomic(path, 0o644, func(w io.Writer) error { return WriteModel(w, d) })
}

// WriteModel writes d to w in the format of SaveModel.
func WriteModel(w io.Writer, d *Deep) error {
	if d == nil {
		return fmt.Errorf("%w: nil model", ErrConfig)
	}
	p := make([]float64, d.NumParams())
	d.Params(p)
	buf := make([]byte, 8*len(p))
	for i, v := range p {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
	}
	sum := sha256.Sum256(buf)
	head, err := json.Marshal(modelHeader{Format: ModelFormat, Version: ModelVersion, Config: d.cfg, Params: len(p),
		SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return err
	}
	if _, err := w.Write(append(head, '\n')); err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// LoadModel reads a model written by SaveModel.
func LoadModel(path string) (*Deep, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := ReadModel(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// maxModelHeader bounds the length of a model file's header line.
const maxModelHeader = 64 << 10

// ReadModel reads a model in the format of SaveModel from r, which must
// hold nothing after it. Input that is not such a model is an error
// wrapping ErrModelFile; when the package refuses the file's configuration
// or parameters, the error also wraps the refusal (ErrConfig, for
// instance).
func ReadModel(r io.Reader) (*Deep, error) {
	br := bufio.NewReaderSize(r, maxModelHeader)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("%w: no header line of at most %d bytes (%v)", ErrModelFile, maxModelHeader, err)
	}
	// The format and version first, so that a newer file is reported as
	// such rather than by the fields this version does not know.
	var id struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(line, &id); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrModelFile, err)
	}
	switch {
	case id.Format != ModelFormat:
		return nil, fmt.Errorf("%w: format %q, want %q", ErrModelFile, id.Format, ModelFormat)
	case id.Version < 1 || id.Version > ModelVersion:
		return nil, fmt.Errorf("%w: version %d; this package reads versions 1 to %d", ErrModelFile, id.Version, ModelVersion)
	}
	var h modelHeader
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrModelFile, err)
	}
	if h.Params < 1 || h.Params > MaxModelParams {
		return nil, fmt.Errorf("%w: %d parameters (at most %d)", ErrModelFile, h.Params, MaxModelParams)
	}
	if err := plausible(h.Config, h.Params); err != nil {
		return nil, err
	}
	// Read what is there (at most one byte more than announced), so that
	// memory grows with the input, not with what the header claims.
	buf, err := io.ReadAll(io.LimitReader(br, 8*int64(h.Params)+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: reading the parameters: %v", ErrModelFile, err)
	case len(buf) < 8*h.Params:
		return nil, fmt.Errorf("%w: %d parameters announced, %d bytes follow", ErrModelFile, h.Params, len(buf))
	case len(buf) > 8*h.Params:
		return nil, fmt.Errorf("%w: data after the %d parameters", ErrModelFile, h.Params)
	}
	if sum := sha256.Sum256(buf); hex.EncodeToString(sum[:]) != h.SHA256 {
		return nil, fmt.Errorf("%w: the parameters do not match their SHA-256", ErrModelFile)
	}
	p := make([]float64, h.Params)
	for i := range p {
		p[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
	}
	d, err := newDeep(nil, h.Config)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelFile, err)
	}
	if d.NumParams() != h.Params {
		return nil, fmt.Errorf("%w: %d parameters for a configuration that has %d", ErrModelFile, h.Params, d.NumParams())
	}
	if err := d.SetParams(p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelFile, err)
	}
	return d, nil
}

// maxModelImage bounds the values per image of a model file's
// configuration (a 2048×2048 image), which sizes the patch tables built
// before the parameters can be checked against the configuration.
const maxModelImage = 1 << 22

// plausible checks the sizes of a model file's configuration against its
// parameter count before anything is allocated for them: every layer holds
// at least one triangle of M(M+1)/2 values per latent function, so a
// configuration whose M, M2, channels or classes cannot fit in n parameters
// is refused, as are images of more than maxModelImage values.
func plausible(cfg DeepConfig, n int) error {
	bad := func(what string, v int) error {
		return fmt.Errorf("%w: %s = %d does not fit %d parameters", ErrModelFile, what, v, n)
	}
	tri := func(m int) bool { return m >= 0 && m <= n && m*(m+1)/2 <= n }
	for _, v := range []int{cfg.Height, cfg.Width, cfg.Channels} {
		if v < 1 || v > maxModelImage {
			return fmt.Errorf("%w: images %d×%d×%d", ErrModelFile, cfg.Height, cfg.Width, cfg.Channels)
		}
	}
	if cfg.Height*cfg.Width > maxModelImage || cfg.Height*cfg.Width*cfg.Channels > maxModelImage {
		return fmt.Errorf("%w: images %d×%d×%d (at most %d values)", ErrModelFile, cfg.Height, cfg.Width, cfg.Channels, maxModelImage)
	}
	if cfg.Classes > n {
		return bad("classes", cfg.Classes)
	}
	for i, hs := range cfg.Hidden {
		if !tri(hs.M) || !tri(hs.M2) {
			return bad(fmt.Sprintf("hidden layer %d's M + M2", i), hs.M+hs.M2)
		}
		if hs.Channels > n {
			return bad(fmt.Sprintf("hidden layer %d's channels", i), hs.Channels)
		}
	}
	if len(cfg.Hidden) > 64 {
		return bad("hidden layers", len(cfg.Hidden))
	}
	if !tri(cfg.Output.M) || !tri(cfg.Output.M2) {
		return bad("the output layer's M + M2", cfg.Output.M+cfg.Output.M2)
	}
	return nil
}
