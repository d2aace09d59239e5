package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointFingerprintStable checks that a run's fingerprint is the
// one solvegp wrote before -collapsed and -iters existed (commit 70a9596):
// the help promises that a checkpoint from an older solvegp resumes, and
// flags added since with their defaults must not make it "a run with other
// training flags". A new flag that does change training must change this
// value, and older checkpoints are then refused on purpose.
//
// The data are decimal literals made with integer arithmetic, the same
// bits on every architecture (writeRegression's sines and normal draws
// differ in rounding on arm64, whose compiler fuses multiply-adds); want
// was computed by solvegp at 70a9596 on amd64 and on arm64 under qemu.
func TestCheckpointFingerprintStable(t *testing.T) {
	const want = "98fa699da73151ae30c564c9c38f3964a42d7cda31da1f97a76c29ee45b94127"
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,b,target\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "%d.%d,%d.%02d,%d.%d\n", i*37%61/10-3, i*37%61%10, i*11%17/4-2, i*11%17%4*25, 10+i*i%23/5, i*i%23%5*2)
	}
	path := writeFile(t, dir, "fixed.csv", b.String())
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
