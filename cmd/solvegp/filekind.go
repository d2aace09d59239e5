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
	kindUnknown        fileKind = iota
	kindCheckpoint              // train -checkpoint (package checkpoint, or trainCheckpointMagic)
	kindRegression              // train's model file (JSON, "format": modelfile.Format)
	kindConv                    // convgp.SaveModel (a JSON line, "format": convgp.ModelFormat, then binary)
	kindConvCheckpoint          // bench/convgp -checkpoint (a "convgp-ckpt-" magic line, then binary)
	kindNotJSON                 // none of the above, and not beginning with a JSON object
)

// convCheckpointMagic begins every bench/convgp checkpoint (its format
// versions differ after it).
const convCheckpointMagic = "convgp-ckpt-"

// sniffFile returns the kind of the file at path from its first bytes:
// a checkpoint's magic line, or a JSON object whose first field is the
// "format" that both model files write first. It returns kindNotJSON for
// a file whose first non-blank byte is not '{', and kindUnknown for a file
// it cannot read and for anything else.
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
	if bytes.HasPrefix(head, []byte(convCheckpointMagic)) {
		return kindConvCheckpoint
	}
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && t[0] != '{' {
		return kindNotJSON
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
	case kindConvCheckpoint:
		if want == kindCheckpoint {
			return fmt.Errorf("%s is a bench/convgp training checkpoint, not one of solvegp train: give -checkpoint another file", path)
		}
		return fmt.Errorf("%s is a bench/convgp training checkpoint (go run ./bench/convgp -checkpoint resumes from it), not a model file", path)
	case kindNotJSON:
		if want == kindCheckpoint {
			return err
		}
		return fmt.Errorf("%s is not a model file: it does not begin with a JSON object, as the files of solvegp train and bench/convgp do", path)
	case kindConv:
		if want == kindCheckpoint {
			return fmt.Errorf("%s is a convolutional model file, not a training checkpoint: give -checkpoint another file", path)
		}
		return fmt.Errorf("%s is a convolutional model file: use solvegp classify", path)
	}
	return err
}
