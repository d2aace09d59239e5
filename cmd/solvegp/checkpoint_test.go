package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"path/filepath"
	"testing"
)

// TestCheckpointFingerprintStable checks that a run's fingerprint is the
// one solvegp wrote before -collapsed and -iters existed (commit 70a9596):
// the help promises that a checkpoint from an older solvegp resumes, and
// flags added since with their defaults must not make it "a run with other
// training flags". A new flag that does change training must change this
// value, and older checkpoints are then refused on purpose.
func TestCheckpointFingerprintStable(t *testing.T) {
	const want = "809b18f95e447da6b5a9bce6dc16c648c931b4cb96dafc9ecba99b63e800ab90"
	dir := t.TempDir()
	path := writeRegression(t, dir, 60, 3)
	ck := filepath.Join(dir, "run.ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelWriter{marker: "step 1/", cancel: cancel}
	var buf bytes.Buffer
	code := run(ctx, []string{"train", "-m", "3", "-m2", "3", "-epochs", "1000", "-batch", "10", "-checkpoint", ck, "-out", filepath.Join(dir, "m.json"), path}, &buf, w)
	if code != exitInterrupted {
		t.Fatalf("exit %d: %s", code, w.buf.String())
	}
	c, err := loadTrainCheckpoint(ck)
	if err != nil || c == nil {
		t.Fatalf("checkpoint %v: %v", c, err)
	}
	if got := hex.EncodeToString(c.Fingerprint[:]); got != want {
		t.Errorf("fingerprint %s, solvegp before -collapsed wrote %s for the same run: its checkpoints would be refused", got, want)
	}
}
