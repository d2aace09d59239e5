// Package checkpoint is the file format of training checkpoints shared by
// the solvegp command and the benchmark programs: a magic line, a header
// naming the program that wrote the file and the format version, and the
// program's state (which holds a train.Checkpoint for Fit's loop and the
// model's parameters) gob-encoded after it.
//
// Write and Read work on streams, so that the caller chooses how the file
// is written (atomically, as every program here does). A file of another
// program is refused, and Is tells a checkpoint of this format from the
// programs' older formats, which they still read.
package checkpoint

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
)

// Magic is the first line of every checkpoint file.
const Magic = "solvegp-checkpoint\n"

// Version is the version of the format Write writes.
const Version = 1

// ErrNotCheckpoint is returned by Read for a stream that does not start
// with Magic.
var ErrNotCheckpoint = errors.New("checkpoint: not a solvegp checkpoint")

// header precedes the program's state.
type header struct {
	Version int
	Program string
}

// Write writes Magic, the header naming program and the gob encoding of
// state to w.
func Write(w io.Writer, program string, state any) error {
	if _, err := io.WriteString(w, Magic); err != nil {
		return err
	}
	enc := gob.NewEncoder(w)
	if err := enc.Encode(header{Version: Version, Program: program}); err != nil {
		return err
	}
	return enc.Encode(state)
}

// Read decodes a checkpoint of program from r into state, which must be a
// pointer to the type Write was given. It returns ErrNotCheckpoint if r
// does not start with Magic, and an error for a file of another program
// or of a newer version.
func Read(r io.Reader, program string, state any) error {
	magic := make([]byte, len(Magic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != Magic {
		return ErrNotCheckpoint
	}
	dec := gob.NewDecoder(r)
	var h header
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("checkpoint: damaged header: %w", err)
	}
	if h.Program != program {
		return fmt.Errorf("checkpoint: a checkpoint of %q, not of %q", h.Program, program)
	}
	if h.Version < 1 || h.Version > Version {
		return fmt.Errorf("checkpoint: format version %d, this program reads versions 1 to %d", h.Version, Version)
	}
	if err := dec.Decode(state); err != nil {
		return fmt.Errorf("checkpoint: damaged state: %w", err)
	}
	return nil
}

// Is reports whether a file starting with head is a checkpoint.
func Is(head []byte) bool { return bytes.HasPrefix(head, []byte(Magic)) }
