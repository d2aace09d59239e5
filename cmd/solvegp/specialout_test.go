package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPredictSpecialOutputs checks that predict -out writes through what
// is not a plain new file without destroying it: a FIFO's concurrent
// reader gets the predictions and the FIFO stays, a symbolic link is
// written through to its target and stays a link, a file of mode 600
// keeps its mode, and /dev/null stays a character device.
func TestPredictSpecialOutputs(t *testing.T) {
	dir := t.TempDir()
	data := writeRegression(t, dir, 60, 3)
	model := filepath.Join(dir, "m.json")
	if code, _, stderr := runCmd(t, "train", "-quiet", "-m", "5", "-m2", "3", "-epochs", "2", "-threads", "1", "-out", model, data); code != exitOK {
		t.Fatalf("train: %d %s", code, stderr)
	}
	code, want, stderr := runCmd(t, "predict", "-model", model, data)
	if code != exitOK || want == "" {
		t.Fatalf("predict to stdout: %d %s", code, stderr)
	}
	predict := func(out string) {
		t.Helper()
		if code, _, stderr := runCmd(t, "predict", "-model", model, "-out", out, data); code != exitOK {
			t.Fatalf("predict -out %s: exit %d, %s", out, code, stderr)
		}
	}

	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		got := make(chan string, 1)
		go func() {
			b, _ := os.ReadFile(fifo)
			got <- string(b)
		}()
		done := make(chan struct{})
		go func() { predict(fifo); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("predict -out to a FIFO with a reader did not finish")
		}
		select {
		case s := <-got:
			if s != want {
				t.Fatalf("the FIFO's reader got %d bytes, want %d", len(s), len(want))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the FIFO's reader got nothing")
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("the FIFO was replaced: %v", err)
		}
	})

	t.Run("symlink", func(t *testing.T) {
		target := filepath.Join(dir, "target.csv")
		if err := os.WriteFile(target, []byte("earlier"), 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link.csv")
		if err := os.Symlink("target.csv", link); err != nil {
			t.Fatal(err)
		}
		predict(link)
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link was replaced: %v", err)
		}
		if b, _ := os.ReadFile(target); string(b) != want {
			t.Fatalf("the link's target holds %d bytes, want %d", len(b), len(want))
		}
	})

	t.Run("mode600", func(t *testing.T) {
		out := filepath.Join(dir, "private.csv")
		if err := os.WriteFile(out, []byte("earlier"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(out, 0o600)
		predict(out)
		fi, err := os.Stat(out)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode after predict %v, %v; want 0600", fi.Mode(), err)
		}
		if b, _ := os.ReadFile(out); string(b) != want {
			t.Fatal("wrong content")
		}
	})

	t.Run("devnull", func(t *testing.T) {
		before, err := os.Lstat("/dev/null")
		if err != nil || before.Mode()&os.ModeCharDevice == 0 {
			t.Skip("no /dev/null character device")
		}
		predict("/dev/null")
		after, err := os.Lstat("/dev/null")
		if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
			t.Fatalf("/dev/null changed: %v → %v (%v)", before.Mode(), after.Mode(), err)
		}
	})
}
