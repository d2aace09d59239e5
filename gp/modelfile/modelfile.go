package modelfile

import (
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

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

// Format is the value of the "format" field that identifies a model file.
const Format = "solvegp-model"

// Version is the format version this package writes. It reads files of
// this version and older ones; newer files are rejected with ErrVersion.
const Version = 6

// collapsedBoundVersion is the first format version with collapsed_bound.
const collapsedBoundVersion = 4

// boundVersion is the first format version with bound.
const boundVersion = 5

// blockDiagVersion is the first format version with collapsed_bound
// "blockdiag" and collapsed_block_size.
const blockDiagVersion = 5

// MaxFileSize bounds the size of a model file Load and Read accept
// (1 GiB), so that a corrupt or hostile file cannot exhaust memory.
const MaxFileSize = 1 << 30

var (
	// ErrFormat is wrapped by errors about input that is not a valid
	// model file: bad JSON, missing or inconsistent fields, wrong digests.
	ErrFormat = errors.New("modelfile: invalid model file")
	// ErrVersion is wrapped by the error for a file written by a newer
	// version of the format.
	ErrVersion = errors.New("modelfile: unsupported model-file version")
)

// Bundle is a model with everything else needed to use it for prediction.
type Bundle struct {
	// Model is the trained model. Exactly one of Model and Separate must
	// be set.
	Model *gp.Model
	// Separate is a trained model of separate outputs (format version 6),
	// each a single-output gp.Model of one latent function; Model is then
	// nil. Its Standardizer standardizes the targets per output (YMeans,
	// YScales, with YMean 0 and YScale 1), and its Meta describes the
	// whole (TargetNames names the outputs). Predictions have one column
	// per output, as for a multi-output Model.
	Separate *gp.Separate
	// Standardizer, if not nil, maps raw inputs to the standardized inputs
	// the model was trained on and its predictions back to raw target
	// units. For likelihoods other than Gaussian the targets are labels or
	// counts and YMean must be 0 and YScale 1.
	Standardizer *data.Standardizer
	// Meta holds optional descriptive information.
	Meta Meta
	// CollapsedBound names the collapsed bound the model was fitted with
	// by package collapsed: "standard" (Titsias' SGPR or the collapsed
	// SOLVE-GP bound), "tighter" (the bound of Titsias 2025 and Bui et
	// al. 2025) or "blockdiag" (the block-diagonal bound of Bui and
	// Titsias 2025, format version 5). All have the same optimal q(u) and
	// q(v⊥), so it does not change predictions; it says which objective
	// chose the hyperparameters and inducing inputs. Empty means not
	// recorded (a model not fitted by a collapsed bound, or a file before
	// format version 4). The bound the model itself evaluates (gp.WithBound,
	// gp.Model.Bound; the tighter one for a model trained by mini-batches
	// on it or exported by package collapsed from its tighter bound) is
	// recorded as "bound" (format version 5) and restored by Load.
	CollapsedBound string
	// CollapsedBlockSize is the block size of the "blockdiag" bound (at
	// least 1); it must be 0 for the other values of CollapsedBound.
	CollapsedBlockSize int
	// Unchecked is set by Load and Unmarshal for a file of an older format
	// version whose checksum does not cover everything that affects a
	// prediction: it says what was not checked, for a warning. It is empty
	// for current files and ignored by Marshal.
	Unchecked string
}

// Meta is descriptive information stored with a model. It does not affect
// predictions.
type Meta struct {
	// InputNames are the names of the input columns, if known.
	InputNames []string `json:"input_names,omitempty"`
	// TargetName is the name of the target column, if known.
	TargetName string `json:"target_name,omitempty"`
	// TargetNames are the names of the target columns of a multi-output
	// model, if known (format version 5).
	TargetNames []string `json:"target_names,omitempty"`
	// Info holds free-form key/value pairs (for example the command that
	// trained the model, or its final bound).
	Info map[string]string `json:"info,omitempty"`
}

// Save writes b to path with atomicfile.WriteFile: a regular file is
// replaced atomically (an error leaves an existing file untouched) and
// keeps its mode, a symbolic link is written through, and a device or
// FIFO is written directly.
// The bundle must be one Marshal encodes: a model with a kernel or
// likelihood of your own is an error.
func Save(path string, b *Bundle) error {
	buf, err := Marshal(b)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf, 0o644)
}

// Load reads the model file at path. Errors name the file.
func Load(path string) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	defer f.Close()
	b, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Write encodes b as a model file to w.
func Write(w io.Writer, b *Bundle) error {
	buf, err := Marshal(b)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// Read decodes a model file from r (at most MaxFileSize bytes).
func Read(r io.Reader) (*Bundle, error) {
	buf, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	if len(buf) > MaxFileSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrFormat, MaxFileSize)
	}
	return Unmarshal(buf)
}

// file is the JSON document; see docs/model-format.md.
type file struct {
	Format       string        `json:"format"`
	Version      int           `json:"version"`
	Kind         string        `json:"kind"`
	Whitened     bool          `json:"whitened"`
	Dims         dims          `json:"dims"`
	Kernel       *kernelJSON   `json:"kernel"`
	Likelihood   *likJSON      `json:"likelihood"`
	Mean         *meanJSON     `json:"mean,omitempty"`
	Z            *matrixJSON   `json:"z"`
	O            *matrixJSON   `json:"o"`
	Layout       *layoutJSON   `json:"layout"`
	Params       []float64     `json:"params"`
	ParamsSHA256 string        `json:"params_sha256"`
	ModelSHA256  string        `json:"model_sha256,omitempty"`
	Standardizer *standardJSON `json:"standardizer"`
	Meta         *Meta         `json:"meta,omitempty"`
	// Field of format version 4 (collapsedBoundVersion); "blockdiag" and
	// collapsed_block_size need format version 5 (blockDiagVersion).
	CollapsedBound     string `json:"collapsed_bound,omitempty"`
	CollapsedBlockSize int    `json:"collapsed_block_size,omitempty"`
	// Field of format version 5 (boundVersion): the model's mini-batch
	// bound (gp.Model.Bound) when it is not the standard one.
	Bound string `json:"bound,omitempty"`
}

// checkCollapsedBound accepts the values of Bundle.CollapsedBound with
// their block size.
func checkCollapsedBound(s string, size int) error {
	switch s {
	case "", "standard", "tighter":
		if size != 0 {
			return fmt.Errorf("collapsed_block_size %d goes with collapsed_bound \"blockdiag\" only, not %q", size, s)
		}
		return nil
	case "blockdiag":
		if size < 1 {
			return fmt.Errorf("collapsed_bound \"blockdiag\" needs a collapsed_block_size of at least 1, not %d", size)
		}
		return nil
	}
	return fmt.Errorf("collapsed_bound %q is none of \"standard\", \"tighter\" and \"blockdiag\"", s)
}

type dims struct {
	Input  int `json:"input"`
	M      int `json:"m"`
	M2     int `json:"m2"`
	Latent int `json:"latent"`
}

type kernelJSON struct {
	Type         string        `json:"type"`
	Dim          int           `json:"dim,omitempty"`
	ARD          bool          `json:"ard,omitempty"`
	Lengthscales []float64     `json:"lengthscales,omitempty"`
	Variance     float64       `json:"variance,omitempty"`
	Parts        []*kernelJSON `json:"parts,omitempty"`
	// Fields of format version 2 (kernels.go).
	Period  float64 `json:"period,omitempty"`
	Alpha   float64 `json:"alpha,omitempty"`
	Degree  int     `json:"degree,omitempty"`
	Offset  float64 `json:"offset,omitempty"`
	Columns []int   `json:"columns,omitempty"`
}

type likJSON struct {
	Type          string  `json:"type"`
	NoiseVariance float64 `json:"noise_variance,omitempty"`
	NoiseFloor    float64 `json:"noise_floor,omitempty"`
	Classes       int     `json:"classes,omitempty"`
	Epsilon       float64 `json:"epsilon,omitempty"`
	Samples       int     `json:"samples,omitempty"`
	Quadrature    int     `json:"quadrature_points,omitempty"`
	// Scale, DegreesOfFreedom and DoFFloor are the Student-t's σ, ν and
	// the floor of ν (format version 4).
	Scale            float64 `json:"scale,omitempty"`
	DegreesOfFreedom float64 `json:"degrees_of_freedom,omitempty"`
	DoFFloor         float64 `json:"degrees_of_freedom_floor,omitempty"`
	// Outputs, NoiseVariances and Mixing are those of the multi-output
	// likelihoods (format version 5, multioutput.go).
	Outputs        int         `json:"outputs,omitempty"`
	NoiseVariances []float64   `json:"noise_variances,omitempty"`
	Mixing         *matrixJSON `json:"mixing,omitempty"`
}

type matrixJSON struct {
	Rows int       `json:"rows"`
	Cols int       `json:"cols"`
	Data []float64 `json:"data"`
}

type layoutJSON struct {
	Kernel     int   `json:"kernel"`
	Likelihood int   `json:"likelihood"`
	Z          int   `json:"z"`
	O          int   `json:"o"`
	MU         []int `json:"m_u"`
	LU         []int `json:"l_u"`
	MV         []int `json:"m_v,omitempty"`
	LV         []int `json:"l_v,omitempty"`
	Mean       int   `json:"mean,omitempty"` // format version 4, with a mean function
	Total      int   `json:"total"`
}

type standardJSON struct {
	XMean  []float64 `json:"x_mean"`
	XScale []float64 `json:"x_scale"`
	YMean  float64   `json:"y_mean"`
	YScale float64   `json:"y_scale"`
	// Per-output target statistics (format version 5).
	YMeans  []float64 `json:"y_means,omitempty"`
	YScales []float64 `json:"y_scales,omitempty"`
}

var kindNames = map[gp.Kind]string{gp.SVGP: "svgp", gp.ODVGP: "odvgp", gp.SOLVEGP: "solvegp"}

// Marshal encodes b as an indented JSON model file. It returns an error for
// a kernel or likelihood that the format does not know (see the package
// documentation), for a Standardizer Predictor would refuse, and for a
// model whose kernel or likelihood parameters disagree with its parameter
// vector (set directly, not by gp.Model.SetParams).
func Marshal(b *Bundle) ([]byte, error) {
	if b != nil && b.Separate != nil && b.Model == nil {
		return marshalSeparate(b)
	}
	if b == nil || b.Model == nil || b.Separate != nil {
		return nil, errors.New("modelfile: nil bundle or model, or both Model and Separate set")
	}
	m := b.Model
	d, nm, m2, c := m.Dims()
	kn, ok := kindNames[m.Kind()]
	if !ok {
		return nil, fmt.Errorf("modelfile: unknown model kind %v", m.Kind())
	}
	kj, err := encodeKernel(m.Kernel())
	if err != nil {
		return nil, err
	}
	lj, err := encodeLik(m.Likelihood())
	if err != nil {
		return nil, err
	}
	mj, err := encodeMean(m.Mean())
	if err != nil {
		return nil, err
	}
	params := make([]float64, m.NumParams())
	m.Params(params)
	lay := m.Layout()
	if err := checkInSync(m, params, lay); err != nil {
		return nil, err
	}
	f := file{
		Format:       Format,
		Version:      Version,
		Kind:         kn,
		Whitened:     m.Whitened(),
		Dims:         dims{Input: d, M: nm, M2: m2, Latent: c},
		Kernel:       kj,
		Likelihood:   lj,
		Mean:         mj,
		Z:            encodeMatrix(m.Z()),
		Layout:       &layoutJSON{Kernel: lay.Kernel, Likelihood: lay.Lik, Z: lay.Z, O: lay.O, MU: lay.MU, LU: lay.LU, Total: lay.Total},
		Params:       params,
		ParamsSHA256: digest(params),
	}
	if mj != nil {
		f.Layout.Mean = lay.Mean
	}
	if m2 > 0 {
		f.O = encodeMatrix(m.O())
		f.Layout.MV, f.Layout.LV = lay.MV, lay.LV
	}
	if s := b.Standardizer; s != nil {
		if err := checkStandardizer(s, d, lj.Type); err != nil {
			return nil, err
		}
		if err := checkOutputStandardizer(s, lj.Type, m.NumOutputs()); err != nil {
			return nil, err
		}
		f.Standardizer = &standardJSON{XMean: s.XMean, XScale: s.XScale, YMean: s.YMean, YScale: s.YScale, YMeans: s.YMeans, YScales: s.YScales}
	}
	if err := checkCollapsedBound(b.CollapsedBound, b.CollapsedBlockSize); err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	f.CollapsedBound, f.CollapsedBlockSize = b.CollapsedBound, b.CollapsedBlockSize
	if bk := m.Bound(); bk != gp.StandardBound {
		f.Bound = bk.String()
	}
	if len(b.Meta.InputNames) > 0 || b.Meta.TargetName != "" || len(b.Meta.TargetNames) > 0 || len(b.Meta.Info) > 0 {
		meta := b.Meta
		f.Meta = &meta
	}
	for _, v := range params {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("modelfile: model has a non-finite parameter %g", v)
		}
	}
	return encodeDigested(&f, &f.ModelSHA256, params)
}

// encodeDigested encodes the file v as indented JSON with compact numbers
// and a final newline, after setting *digest (v's model_sha256 field) to
// the digest of v's first encoding and params (see modelDigest).
func encodeDigested(v any, digest *string, params []float64) ([]byte, error) {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	if *digest, err = modelDigest(out, params); err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	if out, err = json.MarshalIndent(v, "", "  "); err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	return append(compactNumbers(out), '\n'), nil
}

// checkInSync returns an error if the parameters of the model's kernel or
// likelihood differ from their part of the model's parameter vector
// params: they were set on the kernel or likelihood directly (the model
// owns them; see gp.NewSVGP) rather than through Model.SetParams. The file
// would record the readable hyperparameters of the one and the parameter
// vector of the other, and Load would reject it.
func checkInSync(m *gp.Model, params []float64, lay gp.Layout) error {
	for _, part := range []struct {
		what string
		v    interface{ Params([]float64) }
		want []float64
	}{
		{"kernel", m.Kernel(), params[lay.Kernel:lay.Lik]},
		{"likelihood", m.Likelihood(), params[lay.Lik:lay.Z]},
		{"mean function", meanParams{m.Mean()}, params[lay.Mean:lay.Total]},
	} {
		got := make([]float64, len(part.want))
		part.v.Params(got)
		for i, v := range got {
			if math.Float64bits(v) != math.Float64bits(part.want[i]) {
				return fmt.Errorf("modelfile: the %s's parameter %d is %g, the model's parameter vector has %g: it was changed on the %s rather than by Model.SetParams",
					part.what, i, v, part.want[i], part.what)
			}
		}
	}
	return nil
}

// meanParams reads the parameters of a mean function, or none for nil.
type meanParams struct{ m gp.MeanFunction }

func (p meanParams) Params(dst []float64) {
	if p.m != nil {
		p.m.Params(dst)
	}
}

// numbersPerLine is how many elements of a numeric array compactNumbers
// puts on one line.
const numbersPerLine = 8

// compactNumbers rewrites the arrays of numbers in indented JSON from one
// element per line to numbersPerLine per line, which makes model files
// about a fifth smaller and easier to read. Only whitespace changes.
func compactNumbers(in []byte) []byte {
	lines := bytes.Split(in, []byte("\n"))
	out := make([]byte, 0, len(in))
	isNumber := func(l []byte) bool {
		l = bytes.TrimSuffix(bytes.TrimSpace(l), []byte(","))
		if len(l) == 0 {
			return false
		}
		for _, c := range l {
			if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i]...)
		if i < len(lines)-1 {
			out = append(out, '\n')
		}
		if !bytes.HasSuffix(lines[i], []byte("[")) {
			continue
		}
		j := i + 1
		for j < len(lines) && isNumber(lines[j]) {
			j++
		}
		if j == i+1 || j >= len(lines) {
			continue
		}
		indent := lines[i+1][:len(lines[i+1])-len(bytes.TrimLeft(lines[i+1], " "))]
		for k := i + 1; k < j; k++ {
			if (k-i-1)%numbersPerLine == 0 {
				out = append(out, indent...)
			}
			out = append(out, bytes.TrimSpace(lines[k])...)
			if k == j-1 || (k-i)%numbersPerLine == 0 {
				out = append(out, '\n')
			} else {
				out = append(out, ' ')
			}
		}
		i = j - 1
	}
	return out
}

func encodeMatrix(a *mat.Dense) *matrixJSON {
	r, c := a.Dims()
	out := &matrixJSON{Rows: r, Cols: c, Data: make([]float64, 0, r*c)}
	for i := 0; i < r; i++ {
		out.Data = append(out.Data, a.RawRowView(i)...)
	}
	return out
}

func digest(params []float64) string {
	h := sha256.New()
	var b [8]byte
	for _, v := range params {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

var familyNames = map[kernel.Family]string{
	kernel.RBF: "rbf", kernel.Matern12: "matern12", kernel.Matern32: "matern32", kernel.Matern52: "matern52",
}

func encodeKernel(k gp.Kernel) (*kernelJSON, error) {
	switch k := k.(type) {
	case *kernel.Stationary:
		name, ok := familyNames[k.Family()]
		if !ok {
			return nil, fmt.Errorf("modelfile: unsupported kernel family %v", k.Family())
		}
		return &kernelJSON{Type: name, Dim: k.Dim(), ARD: k.IsARD(), Lengthscales: k.Lengthscales(), Variance: k.Variance()}, nil
	case *kernel.Sum:
		return encodeParts("sum", k.Parts())
	case *kernel.Product:
		return encodeParts("product", k.Parts())
	}
	if kj, ok, err := encodeMoreKernel(k); ok {
		return kj, err
	}
	return nil, fmt.Errorf("modelfile: cannot save kernel of type %T", k)
}

func encodeParts(name string, parts []kernel.Kernel) (*kernelJSON, error) {
	out := &kernelJSON{Type: name}
	for _, p := range parts {
		pj, err := encodeKernel(p)
		if err != nil {
			return nil, err
		}
		out.Parts = append(out.Parts, pj)
	}
	return out, nil
}

func encodeLik(l gp.Likelihood) (*likJSON, error) {
	lj, err := encodeLikType(l)
	if err != nil {
		return nil, err
	}
	if q, ok := l.(interface{ QuadraturePoints() int }); ok {
		lj.Quadrature = q.QuadraturePoints()
	}
	return lj, nil
}

func encodeLikType(l gp.Likelihood) (*likJSON, error) {
	switch l := l.(type) {
	case *likelihood.Gaussian:
		return &likJSON{Type: "gaussian", NoiseVariance: l.NoiseVariance(), NoiseFloor: l.NoiseFloor()}, nil
	case *likelihood.Bernoulli:
		return &likJSON{Type: "bernoulli"}, nil
	case *likelihood.Poisson:
		return &likJSON{Type: "poisson"}, nil
	case *likelihood.RobustMax:
		return &likJSON{Type: "robustmax", Classes: l.NumLatent(), Epsilon: l.Epsilon()}, nil
	case *likelihood.Softmax:
		return &likJSON{Type: "softmax", Classes: l.NumLatent(), Samples: l.Samples()}, nil
	}
	if lj, ok := encodeMoreLik(l); ok {
		return lj, nil
	}
	if lj, ok := encodeMultiLik(l); ok {
		return lj, nil
	}
	return nil, fmt.Errorf("modelfile: cannot save likelihood of type %T", l)
}

func checkStandardizer(s *data.Standardizer, d int, lik string) error {
	if len(s.XMean) != d || len(s.XScale) != d {
		return fmt.Errorf("%w: standardizer has %d means and %d scales for %d inputs", ErrFormat, len(s.XMean), len(s.XScale), d)
	}
	for j := 0; j < d; j++ {
		if !finite(s.XMean[j]) || !(s.XScale[j] > 0) || !finite(s.XScale[j]) {
			return fmt.Errorf("%w: standardizer column %d has mean %g and scale %g", ErrFormat, j+1, s.XMean[j], s.XScale[j])
		}
	}
	if !finite(s.YMean) || !(s.YScale > 0) || !finite(s.YScale) {
		return fmt.Errorf("%w: standardizer has target mean %g and scale %g", ErrFormat, s.YMean, s.YScale)
	}
	if !standardizableTarget(lik) && (s.YMean != 0 || s.YScale != 1) {
		return fmt.Errorf("%w: %s targets cannot be standardized (target mean %g, scale %g)", ErrFormat, lik, s.YMean, s.YScale)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Unmarshal decodes a model file held in buf.
func Unmarshal(buf []byte) (*Bundle, error) {
	// One strict pass decodes a valid file. Only when it fails is the
	// header decoded on its own, so that a file of a newer version is
	// reported as such rather than by its first unknown field.
	var kind struct {
		Kind string `json:"kind"`
	}
	if bytes.Contains(buf, []byte(`"separate"`)) && json.Unmarshal(buf, &kind) == nil && kind.Kind == kindSeparate {
		return unmarshalSeparate(buf)
	}
	var f file
	if err := decodeStrict(buf, &f); err != nil {
		var head struct {
			Format  string `json:"format"`
			Version int    `json:"version"`
		}
		if herr := json.Unmarshal(buf, &head); herr != nil {
			return nil, jsonError(buf, herr)
		}
		if err := checkHead(head.Format, head.Version); err != nil {
			return nil, err
		}
		return nil, jsonError(buf, err)
	}
	if err := checkHead(f.Format, f.Version); err != nil {
		return nil, err
	}
	// The digest is checked after the structural checks of build, whose
	// errors say more about what is wrong with a file.
	b, err := f.build()
	if err != nil {
		return nil, err
	}
	if b.Unchecked, err = f.checkModelDigest(buf); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeStrict decodes the one JSON document in buf into v, refusing
// unknown fields and anything after the document.
func decodeStrict(buf []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON document")
	}
	return nil
}

func checkHead(format string, version int) error {
	if format != Format {
		return fmt.Errorf("%w: format is %q, want %q", ErrFormat, format, Format)
	}
	if version > Version {
		return fmt.Errorf("%w: the file has format version %d but this program reads versions up to %d; upgrade solvegp to load it", ErrVersion, version, Version)
	}
	if version < 1 {
		return fmt.Errorf("%w: version %d", ErrFormat, version)
	}
	return nil
}

// jsonError turns a JSON decoding error into one with a line and column.
func jsonError(buf []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset - 1 // the offset is just past the offending byte
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(buf)) {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	line, col := 1, 1
	for _, ch := range buf[:off] {
		if ch == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return fmt.Errorf("%w: line %d, column %d: %v", ErrFormat, line, col, err)
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

func (f *file) build() (*Bundle, error) {
	var kind gp.Kind
	switch f.Kind {
	case "svgp":
		kind = gp.SVGP
	case "odvgp":
		kind = gp.ODVGP
	case "solvegp":
		kind = gp.SOLVEGP
	default:
		return nil, bad("unknown model kind %q (want svgp, odvgp or solvegp)", f.Kind)
	}
	d, m, m2, c := f.Dims.Input, f.Dims.M, f.Dims.M2, f.Dims.Latent
	if d < 1 || m < 1 || m2 < 0 || c < 1 {
		return nil, bad("dims input %d, m %d, m2 %d, latent %d", d, m, m2, c)
	}
	if (kind == gp.SVGP) != (m2 == 0) {
		return nil, bad("%s model with m2 = %d", f.Kind, m2)
	}
	if f.Kernel == nil || f.Likelihood == nil || f.Z == nil || f.Layout == nil {
		return nil, bad("missing kernel, likelihood, z or layout")
	}
	z, err := f.Z.decode("z", m, d)
	if err != nil {
		return nil, err
	}
	var o *mat.Dense
	if m2 > 0 {
		if f.O == nil {
			return nil, bad("missing o")
		}
		if o, err = f.O.decode("o", m2, d); err != nil {
			return nil, err
		}
	} else if f.O != nil {
		return nil, bad("svgp model with orthogonal inducing inputs o")
	}
	if err := checkKernelVersion(f.Kernel, f.Version); err != nil {
		return nil, err
	}
	if err := checkLikVersion(f.Likelihood, f.Version); err != nil {
		return nil, err
	}
	if err := checkMultiVersion(f); err != nil {
		return nil, err
	}
	k, err := decodeKernel(f.Kernel, d, 0)
	if err != nil {
		return nil, err
	}
	lik, err := decodeLik(f.Likelihood)
	if err != nil {
		return nil, err
	}
	if lik.NumLatent() != c {
		return nil, bad("likelihood has %d latent functions, dims.latent is %d", lik.NumLatent(), c)
	}
	if f.Version < meanVersion && f.Layout.Mean != 0 {
		return nil, bad("layout.mean needs format version %d, the file has version %d", meanVersion, f.Version)
	}
	mf, err := decodeMean(f.Mean, d, f.Version)
	if err != nil {
		return nil, err
	}
	nMean := 0
	if mf != nil {
		nMean = mf.NumParams()
	}
	// Check the size of the parameter vector before building the model,
	// whose workspaces grow as M², so that a file cannot make us allocate
	// much more than its own size.
	want, ok := paramCount(kind, k.NumParams()+lik.NumParams()+nMean, d, m, m2, c, len(f.Params))
	if !ok {
		return nil, bad("%d parameters, the model needs more (dims input %d, m %d, m2 %d, latent %d)", len(f.Params), d, m, m2, c)
	}
	if len(f.Params) != want {
		return nil, bad("%d parameters, the model needs %d", len(f.Params), want)
	}
	if got := digest(f.Params); f.ParamsSHA256 != got {
		return nil, bad("params_sha256 does not match the parameters (file corrupt or edited)")
	}
	opts, err := f.modelOptions(mf)
	if err != nil {
		return nil, err
	}
	var model *gp.Model
	switch kind {
	case gp.SVGP:
		model, err = gp.NewSVGP(k, lik, z, opts...)
	case gp.ODVGP:
		model, err = gp.NewODVGP(k, lik, z, o, opts...)
	case gp.SOLVEGP:
		model, err = gp.NewSOLVEGP(k, lik, z, o, opts...)
	}
	if err != nil {
		return nil, bad("%v", err)
	}
	if err := checkLayout(f.Layout, model.Layout(), mf != nil); err != nil {
		return nil, err
	}
	if err := model.SetParams(f.Params); err != nil {
		return nil, bad("%v", err)
	}
	// Z and O live in the parameter vector too; the copies in the file
	// must agree with it.
	if !mat.Equal(model.Z(), z) {
		return nil, bad("z disagrees with the parameter vector")
	}
	if o != nil && !mat.Equal(model.O(), o) {
		return nil, bad("o disagrees with the parameter vector")
	}
	if err := checkKernelValues(f.Kernel, model.Kernel(), "kernel"); err != nil {
		return nil, err
	}
	if err := checkMeanValues(f.Mean, model.Mean()); err != nil {
		return nil, err
	}
	if err := checkLikValues(f.Likelihood, lik); err != nil {
		return nil, err
	}
	b := &Bundle{Model: model}
	if s := f.Standardizer; s != nil {
		b.Standardizer = &data.Standardizer{XMean: s.XMean, XScale: s.XScale, YMean: s.YMean, YScale: s.YScale, YMeans: s.YMeans, YScales: s.YScales}
		if err := checkStandardizer(b.Standardizer, d, f.Likelihood.Type); err != nil {
			return nil, err
		}
		if err := checkOutputStandardizer(b.Standardizer, f.Likelihood.Type, model.NumOutputs()); err != nil {
			return nil, err
		}
	}
	if f.Meta != nil {
		b.Meta = *f.Meta
	}
	if err := f.checkCollapsedBound(); err != nil {
		return nil, err
	}
	b.CollapsedBound, b.CollapsedBlockSize = f.CollapsedBound, f.CollapsedBlockSize
	return b, nil
}

// modelOptions returns the gp options of the file's model: whitening, the
// mini-batch bound, and the mean function mf when it is not nil.
func (f *file) modelOptions(mf gp.MeanFunction) ([]gp.Option, error) {
	opts := []gp.Option{gp.WithWhitening(f.Whitened)}
	if f.Bound != "" {
		if f.Version < boundVersion {
			return nil, bad("bound needs format version %d, the file has version %d", boundVersion, f.Version)
		}
		bk, err := gp.ParseBound(f.Bound)
		if err != nil {
			return nil, bad("bound %q is neither \"standard\" nor \"tighter\"", f.Bound)
		}
		opts = append(opts, gp.WithBound(bk))
	}
	if mf != nil {
		opts = append(opts, gp.WithMean(mf))
	}
	return opts, nil
}

// checkCollapsedBound checks collapsed_bound and collapsed_block_size,
// values and format version.
func (f *file) checkCollapsedBound() error {
	if err := checkCollapsedBound(f.CollapsedBound, f.CollapsedBlockSize); err != nil {
		return bad("%v", err)
	}
	if f.CollapsedBound != "" && f.Version < collapsedBoundVersion {
		return bad("collapsed_bound needs format version %d, the file has version %d", collapsedBoundVersion, f.Version)
	}
	if f.CollapsedBound == "blockdiag" && f.Version < blockDiagVersion {
		return bad("collapsed_bound \"blockdiag\" needs format version %d, the file has version %d", blockDiagVersion, f.Version)
	}
	return nil
}

// sizeProduct returns a·b for sizes a, b ≥ 0 read from a file, and whether
// the product is at most limit. It tests against limit before it
// multiplies, so that hostile sizes cannot wrap around to a small product.
func sizeProduct(a, b, limit int) (int, bool) {
	if a < 0 || b < 0 || limit < 0 || a != 0 && b > limit/a {
		return 0, false
	}
	return a * b, true
}

// paramCount returns the length of the parameter vector of a model of the
// given kind with hyper kernel and likelihood parameters, d inputs, m and
// m2 inducing inputs and c latent functions, and whether it is at most
// limit. Every sum and product is checked against limit before it is
// formed.
func paramCount(kind gp.Kind, hyper, d, m, m2, c, limit int) (int, bool) {
	total := 0
	ok := true
	add := func(v int, vok bool) {
		if !ok || !vok || v > limit-total {
			ok = false
			return
		}
		total += v
	}
	// tri(n) = n + n(n+1)/2: a mean and a triangular factor per latent
	// function; the even one of n and n+1 is halved before multiplying.
	tri := func(n int) (int, bool) {
		if n < 0 || n > limit {
			return 0, false
		}
		a, b := n, n+1
		if a%2 == 0 {
			a /= 2
		} else {
			b /= 2
		}
		t, tok := sizeProduct(a, b, limit)
		if !tok || n > limit-t {
			return 0, false
		}
		return n + t, true
	}
	add(hyper, hyper >= 0)
	add(sizeProduct(m, d, limit))
	add(sizeProduct(m2, d, limit))
	if t, tok := tri(m); tok {
		add(sizeProduct(c, t, limit))
	} else {
		ok = false
	}
	switch kind {
	case gp.SOLVEGP:
		if t, tok := tri(m2); tok {
			add(sizeProduct(c, t, limit))
		} else {
			ok = false
		}
	case gp.ODVGP:
		add(sizeProduct(c, m2, limit))
	}
	return total, ok
}

// decode checks that mj is a rows×cols matrix holding rows·cols values and
// returns a copy of it.
func (mj *matrixJSON) decode(name string, rows, cols int) (*mat.Dense, error) {
	if mj.Rows != rows || mj.Cols != cols {
		return nil, bad("%s is %d×%d, dims say %d×%d", name, mj.Rows, mj.Cols, rows, cols)
	}
	if n, ok := sizeProduct(rows, cols, len(mj.Data)); !ok || n != len(mj.Data) {
		return nil, bad("%s has %d values, want %d×%d", name, len(mj.Data), rows, cols)
	}
	return mat.NewDense(rows, cols, append([]float64(nil), mj.Data...)), nil
}

// maxKernelDepth bounds the nesting of sum and product kernels.
const maxKernelDepth = 32

func decodeKernel(kj *kernelJSON, d, depth int) (gp.Kernel, error) {
	if kj == nil {
		return nil, bad("null kernel")
	}
	if depth > maxKernelDepth {
		return nil, bad("kernels nested deeper than %d", maxKernelDepth)
	}
	if kj.Columns != nil {
		return decodeActive(kj, d, depth)
	}
	if k, ok, err := decodeMoreKernel(kj, d); ok {
		return k, err
	}
	switch kj.Type {
	case "sum", "product":
		if len(kj.Parts) < 1 {
			return nil, bad("%s kernel without parts", kj.Type)
		}
		parts := make([]kernel.Kernel, len(kj.Parts))
		for i, p := range kj.Parts {
			k, err := decodeKernel(p, d, depth+1)
			if err != nil {
				return nil, err
			}
			parts[i] = k
		}
		var (
			k   gp.Kernel
			err error
		)
		if kj.Type == "sum" {
			k, err = kernel.NewSum(parts...)
		} else {
			k, err = kernel.NewProduct(parts...)
		}
		if err != nil {
			return nil, bad("%v", err)
		}
		return k, nil
	}
	var fam kernel.Family = -1
	for f, name := range familyNames {
		if name == kj.Type {
			fam = f
		}
	}
	if fam < 0 {
		return nil, bad("unknown kernel type %q", kj.Type)
	}
	if kj.Dim != d {
		return nil, bad("%s kernel of dimension %d for %d inputs", kj.Type, kj.Dim, d)
	}
	want := 1
	if kj.ARD {
		want = d
	}
	if len(kj.Lengthscales) != want {
		return nil, bad("%s kernel has %d lengthscales, want %d", kj.Type, len(kj.Lengthscales), want)
	}
	var opts []kernel.Option
	if kj.ARD {
		opts = append(opts, kernel.Lengthscales(kj.Lengthscales))
	}
	k, err := kernel.NewStationary(fam, d, kj.Lengthscales[0], kj.Variance, opts...)
	if err != nil {
		return nil, bad("%v", err)
	}
	return k, nil
}

// checkKernelValues checks that the readable hyperparameters in the file
// match those the parameter vector gave the kernel (to rounding).
func checkKernelValues(kj *kernelJSON, k gp.Kernel, where string) error {
	if ok, err := checkMoreKernelValues(kj, k, where); ok {
		return err
	}
	switch k := k.(type) {
	case *kernel.Stationary:
		ls := k.Lengthscales()
		for i := range ls {
			if !approxEqual(ls[i], kj.Lengthscales[i]) {
				return bad("%s lengthscale %d is %g, the parameter vector gives %g", where, i+1, kj.Lengthscales[i], ls[i])
			}
		}
		if !approxEqual(k.Variance(), kj.Variance) {
			return bad("%s variance is %g, the parameter vector gives %g", where, kj.Variance, k.Variance())
		}
	case *kernel.Sum:
		for i, p := range k.Parts() {
			if err := checkKernelValues(kj.Parts[i], p, fmt.Sprintf("%s part %d", where, i+1)); err != nil {
				return err
			}
		}
	case *kernel.Product:
		for i, p := range k.Parts() {
			if err := checkKernelValues(kj.Parts[i], p, fmt.Sprintf("%s part %d", where, i+1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// approxEqual reports whether a and b agree to a relative 1e-9 (the readable
// hyperparameters pass through softplus and its inverse).
func approxEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func decodeLik(lj *likJSON) (gp.Likelihood, error) {
	var (
		l   gp.Likelihood
		err error
	)
	var quad []likelihood.Option
	switch lj.Type {
	case "bernoulli", "poisson", "robustmax", "studentt", "heteroscedastic":
		if lj.Quadrature != 0 {
			quad = append(quad, likelihood.QuadraturePoints(lj.Quadrature))
		}
	default:
		if lj.Quadrature != 0 {
			return nil, bad("%s likelihood with quadrature_points", lj.Type)
		}
	}
	switch lj.Type {
	case "gaussian":
		// A trained noise may sit at its floor (σ² = floor + softplus(u)
		// rounds to the floor once u ≪ 0), which NewGaussian refuses as a
		// starting value. The parameter vector sets u afterwards, and
		// noise_variance is checked against it.
		noise := lj.NoiseVariance
		if !(noise >= lj.NoiseFloor) || math.IsInf(noise, 1) {
			return nil, bad("gaussian noise_variance %g below its floor %g or not finite", noise, lj.NoiseFloor)
		}
		if noise == lj.NoiseFloor {
			noise = 2 * lj.NoiseFloor
		}
		l, err = likelihood.NewGaussian(noise, likelihood.NoiseFloor(lj.NoiseFloor))
	case "bernoulli":
		l, err = likelihood.NewBernoulli(quad...)
	case "poisson":
		l, err = likelihood.NewPoisson(quad...)
	case "robustmax":
		if lj.Classes < 2 || lj.Classes > 1<<16 {
			return nil, bad("robustmax with %d classes", lj.Classes)
		}
		l, err = likelihood.NewRobustMax(lj.Classes, append(quad, likelihood.Epsilon(lj.Epsilon))...)
	case "softmax":
		if lj.Classes < 2 || lj.Classes > 1<<16 {
			return nil, bad("softmax with %d classes", lj.Classes)
		}
		l, err = likelihood.NewSoftmax(lj.Classes, likelihood.Samples(lj.Samples))
	default:
		var ok bool
		if l, ok, err = decodeMoreLik(lj, quad); !ok {
			if l, ok, err = decodeMultiLik(lj); !ok {
				return nil, bad("unknown likelihood type %q", lj.Type)
			}
		}
	}
	if err != nil {
		return nil, bad("%v", err)
	}
	return l, nil
}

func checkLayout(f *layoutJSON, l gp.Layout, hasMean bool) error {
	eq := func(a, b []int) bool {
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
	mv, lv := l.MV, l.LV
	if len(f.MV) == 0 && len(f.LV) == 0 {
		// SVGP files omit the empty orthogonal offsets.
		mv, lv = nil, nil
		for _, v := range l.MV {
			if v >= 0 {
				mv = l.MV
			}
		}
		for _, v := range l.LV {
			if v >= 0 {
				lv = l.LV
			}
		}
	}
	meanOff := 0 // layout.mean is absent without a mean function
	if hasMean {
		meanOff = l.Mean
	}
	if f.Mean != meanOff || f.Kernel != l.Kernel || f.Likelihood != l.Lik || f.Z != l.Z || f.O != l.O || f.Total != l.Total ||
		!eq(f.MU, l.MU) || !eq(f.LU, l.LU) || !eq(f.MV, mv) || !eq(f.LV, lv) {
		return bad("layout %+v does not match the model's layout %+v", *f, l)
	}
	return nil
}
