package modelfile

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp/data"
)

// resign sets the model_sha256 of an edited model file to that of its new
// content, as a writer of the edited file would.
func resign(t *testing.T, file []byte) []byte {
	t.Helper()
	sum, err := modelDigest(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"model_sha256": "[0-9a-f]*"`)
	if !re.Match(file) {
		t.Fatal("no model_sha256 to replace")
	}
	return re.ReplaceAll(file, []byte(`"model_sha256": "`+sum+`"`))
}

// standardizedFile is a saved model with a standardization of inputs and
// targets.
func standardizedFile(t *testing.T) string {
	t.Helper()
	model := build(t, cases()[5], rand.New(rand.NewPCG(5, 6)))
	buf, err := Marshal(&Bundle{Model: model, Standardizer: &data.Standardizer{
		XMean: []float64{0.5, -1}, XScale: []float64{2, 0.25}, YMean: 7, YScale: 3}})
	if err != nil {
		t.Fatal(err)
	}
	return string(buf)
}

// TestModelDigest checks that model_sha256 detects an edit to anything
// that affects a prediction, the standardization first (an edited y_mean
// once shifted every prediction silently), and no edit to meta, whitespace
// or the spelling of a number.
func TestModelDigest(t *testing.T) {
	s := standardizedFile(t)
	if _, err := Unmarshal([]byte(s)); err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) []byte {
		if !strings.Contains(s, old) {
			t.Fatalf("file has no %q", old)
		}
		return []byte(strings.Replace(s, old, new, 1))
	}
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"y_mean", edit(`"y_mean": 7`, `"y_mean": 8`)},
		{"y_scale", edit(`"y_scale": 3`, `"y_scale": 3.5`)},
		{"x_mean", edit(`"x_mean": [`+"\n      0.5", `"x_mean": [`+"\n      0.75")},
		{"x_scale", edit(`"x_scale": [`+"\n      2", `"x_scale": [`+"\n      4")},
		{"whitened", edit(`"whitened": true`, `"whitened": false`)},
		{"kernel family", edit(`"type": "rbf"`, `"type": "matern52"`)},
		{"digest removed", regexp.MustCompile(`,\s*"model_sha256": "[0-9a-f]*"`).ReplaceAll([]byte(s), nil)},
	} {
		if string(tc.in) == s {
			t.Fatalf("%s: the edit changed nothing", tc.name)
		}
		_, err := Unmarshal(tc.in)
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "model_sha256") {
			t.Errorf("%s: error %v, want one about model_sha256", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"meta", edit(`"standardizer"`, `"meta": {"target_name": "renamed"}, "standardizer"`)},
		{"number spelling", edit(`"y_mean": 7`, `"y_mean": 7.000e0`)},
		{"whitespace", []byte(strings.ReplaceAll(s, "\n", "\n  "))},
	} {
		if _, err := Unmarshal(tc.in); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestVersion1Unchecked checks that a version 1 file, whose checksum covers
// the parameters only, still loads, with Bundle.Unchecked saying so, and
// that a version 1 file with a model_sha256 is refused.
func TestVersion1Unchecked(t *testing.T) {
	s := standardizedFile(t)
	b, err := Unmarshal([]byte(s))
	if err != nil || b.Unchecked != "" {
		t.Fatalf("current file: %v, Unchecked %q", err, b.Unchecked)
	}
	v1 := strings.Replace(s, versionField, `"version": 1`, 1)
	noSum := regexp.MustCompile(`,\s*"model_sha256": "[0-9a-f]*"`).ReplaceAllString(v1, "")
	b, err = Unmarshal([]byte(noSum))
	if err != nil {
		t.Fatalf("version 1 file: %v", err)
	}
	if !strings.Contains(b.Unchecked, "version 1") || !strings.Contains(b.Unchecked, "standardization") {
		t.Errorf("version 1 file: Unchecked %q", b.Unchecked)
	}
	if b.Standardizer == nil || b.Standardizer.YMean != 7 {
		t.Errorf("version 1 file: standardizer %+v", b.Standardizer)
	}
	if _, err := Unmarshal([]byte(v1)); err == nil || !strings.Contains(err.Error(), "version 1 file has no model_sha256") {
		t.Errorf("version 1 file with model_sha256: %v", err)
	}
	// Saving the loaded model again writes the current version, checked.
	out, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if b2, err := Unmarshal(out); err != nil || b2.Unchecked != "" || !strings.Contains(string(out), versionField) {
		t.Errorf("saved again: %v, Unchecked %q", err, b2.Unchecked)
	}
}

// TestPythonReaderDigest checks that docs/model_reader.py computes
// model_sha256 as Go does: it reads a current file, refuses one with an
// edited y_mean, and reads a version 1 file with a warning; and that it
// reads collapsed_bound, refusing an unknown value or one in a version 3
// file.
func TestPythonReaderDigest(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	reader, err := filepath.Abs(filepath.Join("..", "..", "docs", "model_reader.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "x.csv")
	if err := os.WriteFile(in, []byte("1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := standardizedFile(t)
	v1 := regexp.MustCompile(`,\s*"model_sha256": "[0-9a-f]*"`).ReplaceAllString(strings.Replace(s, versionField, `"version": 1`, 1), "")
	b, err := Unmarshal([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	b.CollapsedBound = "tighter"
	withBound, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	tb := string(withBound)
	for _, tc := range []struct {
		name, file string
		ok         bool
		stderr     string
	}{
		{"current", s, true, ""},
		{"edited y_mean", strings.Replace(s, `"y_mean": 7`, `"y_mean": 8`, 1), false, "model_sha256 does not match"},
		{"version 1", v1, true, "warning: format version 1"},
		{"collapsed bound", tb, true, ""},
		{"bad collapsed bound", strings.Replace(tb, `"tighter"`, `"loose"`, 1), false, "neither"},
		{"collapsed bound in version 3", strings.Replace(tb, versionField, `"version": 3`, 1), false, "needs format version 4"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd := exec.Command(python, reader, path, in)
		cmd.Stderr = &stderr
		err := cmd.Run()
		if (err == nil) != tc.ok || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%s: %v, stderr %q, want success %v and %q", tc.name, err, stderr.String(), tc.ok, tc.stderr)
		}
	}
}

// versionField is the "version" member of a file this package writes.
var versionField = fmt.Sprintf(`"version": %d`, Version)
