package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/solvegp/solvegp/gp/train"
	ckptfile "github.com/solvegp/solvegp/gp/train/checkpoint"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

// defaultCheckpointEvery is the least wall time between two checkpoints of
// a run. A run that is stopped loses at most the epochs since its last
// checkpoint.
const defaultCheckpointEvery = 60 * time.Second

// checkpoint is the state of an unfinished run at the end of an epoch, or,
// when the program was interrupted, after its last step (Epochs counts the
// finished epochs, Train.Batches the mini-batches of the next one already
// drawn): the model's flat parameter vector, the training loop's state
// (Adam's moments, step and epoch counts; see train.Checkpoint) and the
// bookkeeping of the record. Checkpoints written before Train existed
// decode with Train nil; such a run resumes with a fresh Adam state, which
// the record notes in Resumed.
type checkpoint struct {
	Key            string
	Epochs         int
	Steps          int
	TrainSeconds   float64
	InitSeconds    float64
	FinalObjective float64
	Resumed        []int
	ResumedExact   []int
	// ResumedRandomRestarted: see Record (gob leaves it nil in older
	// checkpoints).
	ResumedRandomRestarted []int
	// ResumedExactSteps: see Record (gob leaves it nil in older
	// checkpoints, and older programs ignore it).
	ResumedExactSteps []int
	Params            []float64
	Train             *train.Checkpoint
}

// checkpointPath is the checkpoint file of the run with the given key:
// <out>/checkpoints/<data set>-<model>-<split>-<hash of the key>.gob.
func checkpointPath(out, key string) string {
	sum := sha256.Sum256([]byte(key))
	parts := strings.SplitN(key, "|", 4)
	name := strings.Join(parts[:min(3, len(parts))], "-")
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			return r
		}
		return '_'
	}, name)
	return filepath.Join(out, "checkpoints", fmt.Sprintf("%s-%x.gob", name, sum[:6]))
}

// checkpointProgram names this program in the checkpoint files' header
// (package gp/train/checkpoint).
const checkpointProgram = "bench/regression"

// saveCheckpoint writes c to path atomically in package checkpoint's
// format.
func saveCheckpoint(path string, c *checkpoint) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return ckptfile.Write(w, checkpointProgram, c) })
}

// decodeCheckpoint decodes a checkpoint file's content into c: package
// checkpoint's format, or the earlier one, a bare gob-encoded checkpoint.
func decodeCheckpoint(buf []byte, c *checkpoint) error {
	if ckptfile.Is(buf) {
		return ckptfile.Read(bytes.NewReader(buf), checkpointProgram, c)
	}
	return gob.NewDecoder(bytes.NewReader(buf)).Decode(c)
}

// loadCheckpoint returns the checkpoint at path, or nil if there is none.
// A checkpoint of another run (hash collision) or with a parameter vector
// of the wrong length is an error.
func loadCheckpoint(path, key string, nParams int) (*checkpoint, error) {
	buf, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c checkpoint
	if err := decodeCheckpoint(buf, &c); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it to restart the run)", path, err)
	}
	// A checkpoint within the first epoch (saved on an interruption) has
	// no finished epoch but a training state with mini-batches drawn.
	first := c.Epochs == 0 && c.Train != nil && c.Train.Batches > 0
	if c.Key != key || len(c.Params) != nParams || c.Epochs < 1 && !first || c.Train != nil && (len(c.Train.Adam.M) != nParams || len(c.Train.Adam.V) != nParams) {
		return nil, fmt.Errorf("%s: checkpoint of another run (delete it to restart the run)", path)
	}
	return &c, nil
}

// writeStatus lists the unfinished runs checkpointed under out: for each,
// the data set, model and split, the epochs done out of the run's total, the
// training time so far, seconds per step, and an estimate of the training
// time left at that rate.
func writeStatus(out string, w io.Writer) error {
	paths, err := filepath.Glob(filepath.Join(out, "checkpoints", "*.gob"))
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		_, err := fmt.Fprintf(w, "no unfinished runs under %s\n", out)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "data set\tmodel\tsplit\tepochs\tsteps\ttrained\ts/step\tleft (est.)\t")
	for _, path := range paths {
		buf, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // the run finished since the listing
		}
		if err != nil {
			return err
		}
		var c checkpoint
		if err := decodeCheckpoint(buf, &c); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		parts := strings.Split(c.Key, "|")
		if len(parts) < 4 {
			return fmt.Errorf("%s: malformed run key %q", path, c.Key)
		}
		total := 0
		fmt.Sscanf(parts[3], "epochs=%d", &total)
		perStep, left := "–", "–"
		if c.Steps > 0 && c.TrainSeconds > 0 {
			perStep = fmt.Sprintf("%.3f", c.TrainSeconds/float64(c.Steps))
			if total > c.Epochs && c.Epochs > 0 {
				rest := c.TrainSeconds / float64(c.Epochs) * float64(total-c.Epochs)
				left = time.Duration(rest * float64(time.Second)).Round(time.Minute).String()
			}
		}
		trained := (time.Duration(c.TrainSeconds * float64(time.Second))).Round(time.Second).String()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%s\t%s\t%s\t\n", parts[0], parts[1], parts[2], c.Epochs, total, c.Steps, trained, perStep, left)
	}
	return tw.Flush()
}

func removeCheckpoint(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
