package modelfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
)

// separateVersion is the first format version with models of separate
// outputs (kind "separate").
const separateVersion = 6

// kindSeparate is the "kind" of a file holding a gp.Separate.
const kindSeparate = "separate"

// separateFile is the document of a gp.Separate: one complete
// single-output model document per output (without standardizer or
// meta), and the standardization and meta of the whole. See
// docs/model-format.md.
type separateFile struct {
	Format       string            `json:"format"`
	Version      int               `json:"version"`
	Kind         string            `json:"kind"`
	Outputs      []json.RawMessage `json:"outputs"`
	Standardizer *standardJSON     `json:"standardizer"`
	ModelSHA256  string            `json:"model_sha256"`
	Meta         *Meta             `json:"meta,omitempty"`
}

// marshalSeparate is Marshal for a bundle of separate outputs.
func marshalSeparate(b *Bundle) ([]byte, error) {
	s := b.Separate
	if b.CollapsedBound != "" || b.CollapsedBlockSize != 0 {
		return nil, errors.New("modelfile: a model of separate outputs records no collapsed bound")
	}
	P := s.NumOutputs()
	f := separateFile{Format: Format, Version: Version, Kind: kindSeparate}
	for p := 0; p < P; p++ {
		m := s.Output(p)
		if _, _, _, c := m.Dims(); c != 1 {
			return nil, fmt.Errorf("modelfile: output %d of a separate model has %d latent functions, want one", p, c)
		}
		out, err := Marshal(&Bundle{Model: m})
		if err != nil {
			return nil, fmt.Errorf("output %d: %w", p, err)
		}
		f.Outputs = append(f.Outputs, out)
	}
	if st := b.Standardizer; st != nil {
		if err := checkSeparateStandardizer(st, s); err != nil {
			return nil, err
		}
		f.Standardizer = &standardJSON{XMean: st.XMean, XScale: st.XScale, YMean: st.YMean, YScale: st.YScale, YMeans: st.YMeans, YScales: st.YScales}
	}
	if len(b.Meta.InputNames) > 0 || b.Meta.TargetName != "" || len(b.Meta.TargetNames) > 0 || len(b.Meta.Info) > 0 {
		meta := b.Meta
		f.Meta = &meta
	}
	return encodeDigested(&f, &f.ModelSHA256, nil)
}

// checkSeparateStandardizer checks the standardization of a model of
// separate outputs: one mean and scale per input, a single target mean 0
// and scale 1, and none or one target mean and scale per output, which
// only outputs whose likelihood takes standardized targets may move from
// 0 and 1.
func checkSeparateStandardizer(st *data.Standardizer, s *gp.Separate) error {
	if err := checkStandardizer(st, s.InputDim(), "separate outputs"); err != nil {
		return err
	}
	if st.YMean != 0 || st.YScale != 1 {
		return bad("a model of separate outputs standardizes its targets per output (y_means, y_scales), not by y_mean %g and y_scale %g", st.YMean, st.YScale)
	}
	if len(st.YMeans) == 0 && len(st.YScales) == 0 {
		return nil
	}
	P := s.NumOutputs()
	if len(st.YMeans) != P || len(st.YScales) != P {
		return bad("standardizer has %d target means and %d scales for %d outputs", len(st.YMeans), len(st.YScales), P)
	}
	if err := st.Validate(); err != nil {
		return bad("%v", err)
	}
	for p := 0; p < P; p++ {
		lj, err := encodeLikType(s.Output(p).Likelihood())
		if err != nil {
			return err
		}
		if !standardizableTarget(lj.Type) && (st.YMeans[p] != 0 || st.YScales[p] != 1) {
			return bad("output %d: %s targets cannot be standardized (target mean %g, scale %g)", p, lj.Type, st.YMeans[p], st.YScales[p])
		}
	}
	return nil
}

// unmarshalSeparate is Unmarshal for a document of kind "separate".
func unmarshalSeparate(buf []byte) (*Bundle, error) {
	var f separateFile
	if err := decodeStrict(buf, &f); err != nil {
		return nil, jsonError(buf, err)
	}
	if err := checkHead(f.Format, f.Version); err != nil {
		return nil, err
	}
	if f.Version < separateVersion {
		return nil, bad("kind %q needs format version %d, the file has version %d", kindSeparate, separateVersion, f.Version)
	}
	if len(f.Outputs) == 0 {
		return nil, bad("a model of separate outputs without outputs")
	}
	models := make([]*gp.Model, len(f.Outputs))
	for p, raw := range f.Outputs {
		ob, err := unmarshalOutput(raw, f.Version)
		if err != nil {
			return nil, fmt.Errorf("output %d: %w", p, err)
		}
		models[p] = ob.Model
	}
	s, err := gp.NewSeparate(models)
	if err != nil {
		return nil, bad("%v", err)
	}
	b := &Bundle{Separate: s}
	if st := f.Standardizer; st != nil {
		b.Standardizer = &data.Standardizer{XMean: st.XMean, XScale: st.XScale, YMean: st.YMean, YScale: st.YScale, YMeans: st.YMeans, YScales: st.YScales}
		if err := checkSeparateStandardizer(b.Standardizer, s); err != nil {
			return nil, err
		}
	}
	if f.Meta != nil {
		b.Meta = *f.Meta
	}
	if f.ModelSHA256 == "" {
		return nil, bad("missing model_sha256")
	}
	if got, err := modelDigest(buf, nil); err != nil {
		return nil, bad("model_sha256: %v", err)
	} else if got != f.ModelSHA256 {
		return nil, bad("model_sha256 does not match the file (file corrupt or edited)")
	}
	return b, nil
}

// unmarshalOutput decodes the document of one output of a separate model:
// a single-output model of the container's version, with one latent
// function, no standardizer, meta or collapsed bound.
func unmarshalOutput(raw []byte, version int) (*Bundle, error) {
	var head struct {
		Version int    `json:"version"`
		Kind    string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, bad("%v", err)
	}
	if head.Kind == kindSeparate {
		return nil, bad("an output of a separate model is itself a separate model")
	}
	if head.Version != version {
		return nil, bad("version %d inside a file of version %d", head.Version, version)
	}
	ob, err := Unmarshal(raw)
	if err != nil {
		return nil, err
	}
	switch _, _, _, c := ob.Model.Dims(); {
	case c != 1:
		return nil, bad("%d latent functions, want one", c)
	case ob.Standardizer != nil:
		return nil, bad("a standardizer of its own (the file's applies to every output)")
	case ob.Meta.TargetName != "" || len(ob.Meta.TargetNames) > 0 || len(ob.Meta.InputNames) > 0 || len(ob.Meta.Info) > 0:
		return nil, bad("meta of its own (the file's describes every output)")
	case ob.CollapsedBound != "":
		return nil, bad("a collapsed bound")
	}
	return ob, nil
}

// outputBundle returns the single-output bundle of output p of a separate
// model: its model, with the standardization of the inputs and of its
// target.
func (b *Bundle) outputBundle(p int) *Bundle {
	ob := &Bundle{Model: b.Separate.Output(p)}
	if st := b.Standardizer; st != nil {
		s := &data.Standardizer{XMean: st.XMean, XScale: st.XScale, YMean: 0, YScale: 1}
		if len(st.YMeans) > 0 {
			s.YMean, s.YScale = st.YMeans[p], st.YScales[p]
		}
		ob.Standardizer = s
	}
	return ob
}

// separatePredictor returns the Predictor of a bundle of separate
// outputs: one single-output Predictor per output.
func (b *Bundle) separatePredictor(batch int) (*Predictor, error) {
	if b.Model != nil {
		return nil, errors.New("modelfile: a bundle has both a Model and a Separate")
	}
	if st := b.Standardizer; st != nil {
		if err := checkSeparateStandardizer(st, b.Separate); err != nil {
			return nil, err
		}
	}
	out := &Predictor{d: b.Separate.InputDim()}
	for p := 0; p < b.Separate.NumOutputs(); p++ {
		if _, _, _, c := b.Separate.Output(p).Dims(); c != 1 {
			return nil, fmt.Errorf("%w: output %d has %d latent functions, want one", ErrFormat, p, c)
		}
		pp, err := b.outputBundle(p).Predictor(batch)
		if err != nil {
			return nil, fmt.Errorf("output %d: %w", p, err)
		}
		out.parts = append(out.parts, pp)
	}
	return out, nil
}

// predictSeparate gathers the outputs' predictions as columns.
func (p *Predictor) predictSeparate(x mat.Matrix) (*Prediction, error) {
	var res *Prediction
	P := len(p.parts)
	for j, pp := range p.parts {
		r, err := pp.Predict(x)
		if err != nil {
			return nil, err
		}
		if j == 0 {
			n, _ := r.YMean.Dims()
			res = &Prediction{FMean: mat.NewDense(n, P, nil), FVar: mat.NewDense(n, P, nil), YMean: mat.NewDense(n, P, nil), YVar: mat.NewDense(n, P, nil)}
		}
		for _, c := range []struct{ dst, src *mat.Dense }{{res.FMean, r.FMean}, {res.FVar, r.FVar}, {res.YMean, r.YMean}, {res.YVar, r.YVar}} {
			if c.src == nil {
				return nil, fmt.Errorf("modelfile: output %d predicts no variance", j)
			}
			c.dst.SetCol(j, mat.Col(nil, 0, c.src))
		}
	}
	return res, nil
}

// logPredictiveSeparate returns, for every row, the sum over the row's
// observed outputs (y not NaN) of their log predictive densities: the
// outputs are independent.
func (p *Predictor) logPredictiveSeparate(x mat.Matrix, y []float64) ([]float64, error) {
	xs, err := p.standardize(x) // checks the inputs once for every output
	if err != nil {
		return nil, err
	}
	n, d := xs.Dims()
	P := len(p.parts)
	if n*P != len(y) {
		return nil, fmt.Errorf("%w: %d input rows of %d outputs, %d targets", gp.ErrShape, n, P, len(y))
	}
	lp := make([]float64, n)
	for j, pp := range p.parts {
		var rows []int
		var xv, yv []float64
		for i := 0; i < n; i++ {
			v := y[i*P+j]
			if math.IsNaN(v) {
				continue
			}
			rows = append(rows, i)
			yv = append(yv, v)
			for k := 0; k < d; k++ {
				xv = append(xv, x.At(i, k))
			}
		}
		if len(rows) == 0 {
			continue
		}
		lj, err := pp.LogPredictive(mat.NewDense(len(rows), d, xv), yv)
		if err != nil {
			var pe *gp.PointError
			if errors.As(err, &pe) {
				pe.Point = rows[pe.Point]
			}
			return nil, fmt.Errorf("output %d: %w", j, err)
		}
		for k, i := range rows {
			lp[i] += lj[k]
		}
	}
	return lp, nil
}

// InputDim returns the number of inputs of the bundle's model (0 for a
// bundle without one).
func (b *Bundle) InputDim() int {
	switch {
	case b.Separate != nil:
		return b.Separate.InputDim()
	case b.Model != nil:
		d, _, _, _ := b.Model.Dims()
		return d
	}
	return 0
}

// NumOutputs returns the number of targets per point of the bundle's
// model: its outputs for a Separate or a multi-output Model, else 1 (0
// for a bundle without a model).
func (b *Bundle) NumOutputs() int {
	switch {
	case b.Separate != nil:
		return b.Separate.NumOutputs()
	case b.Model != nil:
		return b.Model.NumOutputs()
	}
	return 0
}
