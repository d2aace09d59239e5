package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/gp/train/checkpoint"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

// trainCheckpoint is the file -checkpoint writes: everything a later
// `solvegp train` with the same flags and data needs to continue the run
// exactly (the model's parameters and the training loop's state, including
// Adam's moments, the batch order's position and the best validated
// parameters), and the training curves so far.
type trainCheckpoint struct {
	Version     int
	Fingerprint [32]byte // of the training flags and the data (runFingerprint)
	Flags       []string // the training flags (trainingFlags), to name those a resumed run changes
	Params      []float64
	Train       train.Checkpoint
	History     []epochRecord
	Seconds     float64 // training wall time before this checkpoint
}

const (
	trainCheckpointVersion = 1
	// trainCheckpointProgram names the program in the checkpoint file's
	// header (package gp/train/checkpoint).
	trainCheckpointProgram = "solvegp train"
	// trainCheckpointMagic starts the files of the format before package
	// checkpoint's: the magic and the gob-encoded trainCheckpoint.
	trainCheckpointMagic = "solvegp-train-checkpoint\n"
)

// notTraining lists the flags that do not change what training computes
// (output options, and the limits -epochs, -steps and -patience, so that a
// resumed run may be extended or cut short), or (-threads) change it only
// in rounding: a checkpoint may be resumed with other values of them.
//
// It also lists -collapsed, -iters and -stream, which do
// not go with -checkpoint
// (a run with a checkpoint always has their defaults): left out of the
// fingerprint, they keep it what a solvegp older than them computed, whose
// checkpoints still resume.
var notTraining = map[string]bool{"out": true, "plot": true, "json": true, "quiet": true, "checkpoint": true,
	"checkpoint-every": true, "threads": true, "epochs": true, "steps": true, "patience": true,
	"collapsed": true, "iters": true, "stream": true}

// omitAtDefault lists training flags added after checkpoints existed whose
// default reproduces what solvegp computed before them (-init kmeans,
// -bound standard): at
// their default they are left out of the fingerprint, so that older
// checkpoints still resume, and any other value changes it.
var omitAtDefault = map[string]bool{"init": true, "bound": true, "outputs": true}

// runFingerprint hashes the values of every training flag and the loaded
// data (shape and bits), so that a checkpoint is only resumed by the run
// that wrote it.
func runFingerprint(fs *flag.FlagSet, tab *data.Table) [32]byte {
	h := sha256.New()
	for _, s := range trainingFlags(fs) {
		fmt.Fprintf(h, "%q\n", s)
	}
	r, c := tab.X.Dims()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	put(uint64(r))
	put(uint64(c))
	for i := 0; i < r; i++ {
		for _, v := range tab.X.RawRowView(i) {
			put(math.Float64bits(v))
		}
	}
	for _, v := range tab.Y {
		put(math.Float64bits(v))
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// saveTrainCheckpoint writes ck to path atomically (an interrupted write
// leaves the previous checkpoint) in package checkpoint's format, encoding
// it straight into the file.
func saveTrainCheckpoint(path string, ck *trainCheckpoint) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		return checkpoint.Write(w, trainCheckpointProgram, ck)
	})
}

// loadTrainCheckpoint reads the checkpoint at path, in package
// checkpoint's format or the earlier one (trainCheckpointMagic); it
// returns nil and no error if there is none.
func loadTrainCheckpoint(path string) (*trainCheckpoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ck trainCheckpoint
	if checkpoint.Is(b) {
		if err := checkpoint.Read(bytes.NewReader(b), trainCheckpointProgram, &ck); err != nil {
			return nil, fmt.Errorf("%s: damaged checkpoint: %v", path, err)
		}
	} else {
		rest, ok := bytes.CutPrefix(b, []byte(trainCheckpointMagic))
		if !ok {
			return nil, wrongFile(path, kindCheckpoint, fmt.Errorf("%s: not a solvegp train checkpoint", path))
		}
		if err := gob.NewDecoder(bytes.NewReader(rest)).Decode(&ck); err != nil {
			return nil, fmt.Errorf("%s: damaged checkpoint: %v", path, err)
		}
	}
	if ck.Version != trainCheckpointVersion {
		return nil, fmt.Errorf("%s: checkpoint version %d, this solvegp reads version %d", path, ck.Version, trainCheckpointVersion)
	}
	return &ck, nil
}
