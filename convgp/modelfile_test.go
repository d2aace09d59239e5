package convgp

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp"
)

// TestModelFileRoundTrip saves models of every shape (one, two and three
// layers, SVGP and SOLVE-GP, TICK or not, with a linear mean) and loads
// them back without the training images: the configuration, the
// parameters and the predictions are the same, bit for bit.
func TestModelFileRoundTrip(t *testing.T) {
	for _, c := range []struct {
		kind   gp.Kind
		hidden int
		tick   bool
		linear bool
	}{{gp.SOLVEGP, 0, true, false}, {gp.SVGP, 0, false, false}, {gp.SOLVEGP, 1, true, true}, {gp.SVGP, 2, false, true}, {gp.SOLVEGP, 2, true, false}} {
		t.Run(fmt.Sprintf("%v/hidden=%d/tick=%v/linear=%v", c.kind, c.hidden, c.tick, c.linear), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(71, 72))
			d, x, _ := tinyDeep(t, c.kind, c.hidden, c.tick, c.linear, rng)
			path := filepath.Join(t.TempDir(), "m.cgp")
			info := map[string]string{"pixels": "standardized: (v − 0.286) / 0.353", "run": "tiny"}
			if err := SaveModel(path, d, info); err != nil {
				t.Fatal(err)
			}
			back, gotInfo, err := LoadModel(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotInfo, info) {
				t.Errorf("info %v, saved %v", gotInfo, info)
			}
			if !reflect.DeepEqual(back.Config(), d.Config()) {
				t.Errorf("configuration %+v, saved %+v", back.Config(), d.Config())
			}
			if c := back.Config(); len(c.Hidden) > 0 {
				c.Hidden[0].M++ // a copy
				if back.Config().Hidden[0].M == c.Hidden[0].M {
					t.Error("Config shares its Hidden slice with the model")
				}
			}
			p, q := make([]float64, d.NumParams()), make([]float64, back.NumParams())
			d.Params(p)
			back.Params(q)
			sameBits(t, "parameters", q, p)
			a, err := d.Predict(x, 3, 2)
			if err != nil {
				t.Fatal(err)
			}
			b, err := back.Predict(x, 3, 2)
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, "predictions", b.RawMatrix().Data, a.RawMatrix().Data)
		})
	}
}

// modelBytes returns a small model's file.
func modelBytes(t *testing.T) []byte {
	t.Helper()
	d, _, _ := tinyDeep(t, gp.SOLVEGP, 1, true, true, rand.New(rand.NewPCG(73, 74)))
	var buf bytes.Buffer
	if err := WriteModel(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withHeader returns file with its header replaced by edit's change of it,
// and the SHA-256 left as it was unless edit changes it.
func withHeader(t *testing.T, file []byte, edit func(h map[string]any)) []byte {
	t.Helper()
	i := bytes.IndexByte(file, '\n')
	var h map[string]any
	if err := json.Unmarshal(file[:i], &h); err != nil {
		t.Fatal(err)
	}
	edit(h)
	head, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(head, '\n'), file[i+1:]...)
}

// TestModelFileErrors checks that damaged, foreign, newer and implausible
// files are refused with ErrModelFile (or ErrConfig for a configuration the
// package refuses), and that a failed save leaves an existing file alone.
func TestModelFileErrors(t *testing.T) {
	good := modelBytes(t)
	if _, _, err := ReadModel(bytes.NewReader(good)); err != nil {
		t.Fatalf("the unchanged file: %v", err)
	}
	head := bytes.IndexByte(good, '\n') + 1
	flip := append([]byte(nil), good...)
	flip[head+13] ^= 1
	nan := append([]byte(nil), good...)
	binary.LittleEndian.PutUint64(nan[head:], math.Float64bits(math.NaN()))
	nanFile := withHeader(t, nan, func(h map[string]any) {
		sum := sha256.Sum256(nan[head:])
		h["sha256"] = hex.EncodeToString(sum[:])
	})
	for _, c := range []struct {
		name string
		file []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrModelFile, "header"},
		{"text", []byte("hello\n"), ErrModelFile, "header"},
		{"other format", withHeader(t, good, func(h map[string]any) { h["format"] = "solvegp-model" }), ErrModelFile, "format"},
		{"newer", withHeader(t, good, func(h map[string]any) { h["version"] = ModelVersion + 1; h["new_field"] = 1 }), ErrModelFile, fmt.Sprintf("version %d", ModelVersion+1)},
		{"unknown field", withHeader(t, good, func(h map[string]any) { h["extra"] = 1 }), ErrModelFile, "unknown field"},
		{"flipped bit", flip, ErrModelFile, "SHA-256"},
		{"truncated", good[:len(good)-3], ErrModelFile, "announced"},
		{"trailing data", append(append([]byte(nil), good...), 0), ErrModelFile, "after"},
		{"huge M", withHeader(t, good, func(h map[string]any) { h["config"].(map[string]any)["Output"].(map[string]any)["M"] = 1 << 40 }), ErrModelFile, "more than"},
		{"many classes", withHeader(t, good, func(h map[string]any) { h["config"].(map[string]any)["Classes"] = 8192 }), ErrModelFile, "configuration that has"},
		{"one class", withHeader(t, good, func(h map[string]any) { h["config"].(map[string]any)["Classes"] = 1 }), ErrModelFile, "configuration that has"},
		{"huge image", withHeader(t, good, func(h map[string]any) { h["config"].(map[string]any)["Height"] = 1 << 30 }), ErrModelFile, "images"},
		{"too many parameters", withHeader(t, good, func(h map[string]any) { h["params"] = MaxModelParams + 1 }), ErrModelFile, "at most"},
		{"other size", withHeader(t, good, func(h map[string]any) { h["config"].(map[string]any)["Output"].(map[string]any)["M"] = 5 }), ErrModelFile, "configuration that has"},
		{"bad config", withHeader(t, good, func(h map[string]any) { h["config"].(map[string]any)["Variance"] = -1 }), ErrConfig, "kernel parameter"},
		{"no latent functions", withHeader(t, good, func(h map[string]any) { h["config"].(map[string]any)["Classes"] = 0 }), ErrModelFile, "latent"},
		// Sizes whose products overflow int and cancel in the sum: a reader
		// that trusted them would allocate without bound for a 1 KB file.
		{"overflow", withHeader(t, good, func(h map[string]any) {
			c := h["config"].(map[string]any)
			c["Height"], c["Width"], c["Channels"], c["Kind"] = 1, 1, 1, int(gp.SOLVEGP)
			c["LinearMean"] = false
			c["Hidden"] = []any{
				map[string]any{"PatchHeight": 1, "PatchWidth": 1, "Channels": 2, "M": 1 << 20, "M2": math.MaxInt64},
				map[string]any{"PatchHeight": 1, "PatchWidth": 1, "Channels": 4, "M": 1 << 62, "M2": 1 << 62},
			}
			c["Output"] = map[string]any{"PatchHeight": 1, "PatchWidth": 1, "M": 1, "M2": 1}
		}), ErrModelFile, "more than"},
		{"bad stride", withHeader(t, good, func(h map[string]any) { h["config"].(map[string]any)["Output"].(map[string]any)["Stride"] = -1 }), ErrModelFile, "stride"},
		{"NaN parameter", nanFile, ErrConfig, "NaN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadModel(bytes.NewReader(c.file))
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %v, want one wrapping %v that mentions %q", err, c.want, c.msg)
			}
		})
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "m.cgp")
	if err := os.WriteFile(path, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SaveModel(path, nil, nil); err == nil {
		t.Error("saving a nil model succeeded")
	}
	d, _, _ := tinyDeep(t, gp.SVGP, 0, false, false, rand.New(rand.NewPCG(75, 76)))
	if err := SaveModel(filepath.Join(dir, "missing", "m.cgp"), d, nil); err == nil {
		t.Error("saving into a missing directory succeeded")
	}
	if err := SaveModel(path, d, map[string]string{"bad": "\xff"}); !errors.Is(err, ErrConfig) {
		t.Errorf("info that is not UTF-8: %v", err)
	}
	if err := SaveModel(path, d, map[string]string{"big": strings.Repeat("x", maxModelHeader)}); !errors.Is(err, ErrConfig) {
		t.Errorf("info too large for the header: %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "earlier" {
		t.Errorf("the earlier file holds %q (%v)", b, err)
	}
	if _, _, err := LoadModel(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("loading a missing file: %v", err)
	}
	if _, _, err := LoadModel(path); !errors.Is(err, ErrModelFile) || !strings.Contains(err.Error(), path) {
		t.Errorf("loading a file that is not a model: %v", err)
	}
}

// TestReadModelNoPanic feeds ReadModel every prefix of a model file and
// single-byte changes of its header: errors, never a panic.
func TestReadModelNoPanic(t *testing.T) {
	good := modelBytes(t)
	head := bytes.IndexByte(good, '\n') + 1
	for n := 0; n < len(good); n += max(1, n/8) {
		if _, _, err := ReadModel(bytes.NewReader(good[:n])); err == nil {
			t.Fatalf("a prefix of %d of %d bytes was accepted", n, len(good))
		}
	}
	for i := 0; i < head; i++ {
		b := append([]byte(nil), good...)
		b[i] ^= 0x20
		_, _, _ = ReadModel(bytes.NewReader(b))
	}
}

// TestParamCount checks that the parameter count ReadModel computes from a
// configuration's sizes is the built model's, for every kind of layer:
// SVGP (with an M2 it ignores) and SOLVE-GP, TICK or not, strides, linear
// means, one to three layers; and that an SVGP model whose configuration
// holds an ignored M2 saves and loads.
func TestParamCount(t *testing.T) {
	for _, kind := range []gp.Kind{gp.SVGP, gp.SOLVEGP} {
		for hidden := 0; hidden <= 2; hidden++ {
			for _, tick := range []bool{false, true} {
				for _, linear := range []bool{false, true} {
					d, _, _ := tinyDeep(t, kind, hidden, tick, linear, rand.New(rand.NewPCG(77, 78)))
					if n, err := paramCount(d.cfg); err != nil || n != d.NumParams() {
						t.Errorf("%v, %d hidden, tick %v, linear %v: paramCount %d (%v), NumParams %d", kind, hidden, tick, linear, n, err, d.NumParams())
					}
				}
			}
		}
	}
	d, _, _ := tinyDeep(t, gp.SVGP, 1, true, false, rand.New(rand.NewPCG(79, 80)))
	d.cfg.Output.M2, d.cfg.Hidden[0].M2 = 1000, -1 // ignored by SVGP layers
	var buf bytes.Buffer
	if err := WriteModel(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadModel(&buf); err != nil {
		t.Errorf("an SVGP model with ignored M2 values: %v", err)
	}
}

// TestNewDeepCopiesHidden checks that a caller changing its DeepConfig's
// Hidden slice after NewDeep changes neither the model nor what SaveModel
// writes.
func TestNewDeepCopiesHidden(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	x := randDense(rng, 30, 36)
	cfg := DeepConfig{Height: 6, Width: 6, Channels: 1, Classes: 3, Kind: gp.SOLVEGP, Threads: 1,
		Init:   InitOptions{Images: 20, PerCentre: 3, Seed: 4},
		Hidden: []Hidden{{PatchHeight: 3, PatchWidth: 2, Channels: 2, M: 3, M2: 2}},
		Output: Output{PatchHeight: 2, PatchWidth: 2, M: 3, M2: 2}}
	d, err := NewDeep(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Hidden[0].Stride, cfg.Hidden[0].M = 2, 4
	var buf bytes.Buffer
	if err := WriteModel(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	back, _, err := ReadModel(&buf)
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Predict(x, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	b, err := back.Predict(x, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "predictions", b.RawMatrix().Data, a.RawMatrix().Data)
}
