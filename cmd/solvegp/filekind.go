package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/solvegp/solvegp/convgp"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train/checkpoint"
)

// fileKind is a kind of file the commands read, as its first bytes tell.
type fileKind int

const (
	kindUnknown    fileKind = iota
	kindCheckpoint          // train -checkpoint (package checkpoint, or trainCheckpointMagic)
	kindRegression          // train's model file (JSON, "format": modelfile.Format)
	kindConv                // convgp.SaveModel (a JSON line, "format": convgp.ModelFormat, then binary)
)

// sniffFile returns the kind of the file at path from its first bytes:
// the checkpoint's magic line, or a JSON object whose first field is the
// "format" that both model files write first. It returns kindUnknown for
// anything else, a file it cannot read included.
func sniffFile(path string) fileKind {
	f, err := os.Open(path)
	if err != nil {
		return kindUnknown
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if checkpoint.Is(head) || bytes.HasPrefix(head, []byte(trainCheckpointMagic)) {
		return kindCheckpoint
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	for _, want := range []json.Token{json.Delim('{'), "format"} {
		if tok, err := dec.Token(); err != nil || tok != want {
			return kindUnknown
		}
	}
	tok, err := dec.Token()
	switch {
	case err != nil:
	case tok == modelfile.Format:
		return kindRegression
	case tok == convgp.ModelFormat:
		return kindConv
	}
	return kindUnknown
}

// wrongFile explains err, the failure to read path as a file of kind
// want, when path is a file of another kind a command reads: it says what
// the file is and which command takes it. Otherwise it returns err.
func wrongFile(path string, want fileKind, err error) error {
	got := sniffFile(path)
	if got == want {
		return err
	}
	switch got {
	case kindCheckpoint:
		return fmt.Errorf("%s is a training checkpoint (solvegp train -checkpoint resumes from it), not a model file", path)
	case kindRegression:
		if want == kindCheckpoint {
			return fmt.Errorf("%s is a regression model file from solvegp train, not a training checkpoint: give -checkpoint another file", path)
		}
		return fmt.Errorf("%s is a regression model file from solvegp train: use solvegp predict or eval", path)
	case kindConv:
		if want == kindCheckpoint {
			return fmt.Errorf("%s is a convolutional model file, not a training checkpoint: give -checkpoint another file", path)
		}
		return fmt.Errorf("%s is a convolutional model file: use solvegp classify", path)
	}
	return err
}
