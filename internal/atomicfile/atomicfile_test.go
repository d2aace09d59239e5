//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWriteReplaces checks that Write replaces a file with what its
// callback streams, and that a callback error or panic leaves the earlier
// file and no temporary file behind.
func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.bin")
	if err := WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 3<<20) // more than the writer's buffer
	for i := range big {
		big[i] = byte(i * 7)
	}
	if err := Write(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(big[:1000])
		if err == nil {
			_, err = w.Write(big[1000:])
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != string(big) {
		t.Fatalf("file after Write: %d bytes, %v", len(got), err)
	}
	boom := errors.New("boom")
	err := Write(path, 0o644, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Fatalf("callback error: got %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(big) {
		t.Fatal("a failed write changed the file")
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the callback's panic", r)
			}
		}()
		Write(path, 0o644, func(w io.Writer) error {
			w.Write([]byte("partial"))
			panic("boom")
		})
	}()
	if got, _ := os.ReadFile(path); string(got) != string(big) {
		t.Fatal("a panicking write changed the file")
	}
	if err := Write(path, 0o644, nil); err == nil {
		t.Fatal("a nil callback was accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files left behind: %v", entries)
	}
}

// TestWriteNewFileMode checks that a new file gets perm.
func TestWriteNewFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new")
	if err := WriteFile(path, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, %v; want 0640", fi.Mode(), err)
	}
}

// TestWriteKeepsMode checks that replacing a file of mode 600 keeps 600
// rather than taking the mode a new file would get.
func TestWriteKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after Write %v, %v; want 0600", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Fatalf("content %q", got)
	}
}

// TestWriteKeepsOwner checks, as root, that a replaced file keeps an
// owner other than the writer.
func TestWriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	path := filepath.Join(t.TempDir(), "owned")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 12345, 23456); err != nil {
		t.Skip(err)
	}
	if err := WriteFile(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 12345 || st.Gid != 23456 {
		t.Fatalf("owner %d:%d, want 12345:23456", st.Uid, st.Gid)
	}
}

// TestWriteThroughSymlink checks that a symbolic link is written through:
// the target gets the content and the link stays a link, also for a
// relative link and a chain of two.
func TestWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(sub, "target")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link1 := filepath.Join(dir, "link1")
	link2 := filepath.Join(dir, "link2")
	if err := os.Symlink("sub/target", link1); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(link1, link2); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link2, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link1, link2} {
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a link: %v, %v", l, fi.Mode(), err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Fatalf("target holds %q", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Fatalf("target mode %v", fi.Mode())
	}
	// A dangling link creates its target.
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("sub/created", dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dangling, []byte("made"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(sub, "created")); string(got) != "made" {
		t.Fatalf("dangling link's target holds %q", got)
	}
	if fi, _ := os.Lstat(dangling); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the dangling link was replaced")
	}
}

// TestWriteFIFO checks that a FIFO is written directly: a concurrent
// reader receives the content and the FIFO stays a FIFO.
func TestWriteFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	if err := Writable(path); err != nil {
		t.Fatalf("Writable(fifo): %v", err)
	}
	got := make(chan string, 1)
	go func() {
		b, err := os.ReadFile(path) // blocks until the writer opens
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(b)
	}()
	done := make(chan error, 1)
	go func() { done <- WriteFile(path, []byte("through the fifo\n"), 0o644) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Write to a FIFO with a reader did not finish")
	}
	select {
	case s := <-got:
		if s != "through the fifo\n" {
			t.Fatalf("reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the FIFO's reader got nothing")
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v, %v", fi.Mode(), err)
	}
}

// TestWriteDevice checks that writing to /dev/null leaves it a character
// device. As root, renaming over it would replace the device node.
func TestWriteDevice(t *testing.T) {
	const dev = "/dev/null"
	before, err := os.Lstat(dev)
	if err != nil || before.Mode()&os.ModeCharDevice == 0 {
		t.Skip("no /dev/null character device")
	}
	if err := Writable(dev); err != nil {
		t.Fatalf("Writable(%s): %v", dev, err)
	}
	if err := WriteFile(dev, []byte("discarded"), 0o644); err != nil {
		t.Fatal(err)
	}
	after, err := os.Lstat(dev)
	if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
		t.Fatalf("%s changed: %v → %v (%v)", dev, before.Mode(), after.Mode(), err)
	}
}

// TestWriteDevStdout checks that /dev/stdout and /proc/self/fd/1, links
// to a descriptor, are written through the descriptor (here a regular
// file) and stay links.
func TestWriteDevStdout(t *testing.T) {
	before, err := os.Lstat("/dev/stdout")
	if err != nil || before.Mode()&os.ModeSymlink == 0 {
		t.Skip("no /dev/stdout link")
	}
	// Point the test's stdout at a file so that the content can be read.
	out := filepath.Join(t.TempDir(), "stdout")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := unix.Dup(1)
	if err != nil {
		t.Skip(err)
	}
	if err := unix.Dup2(int(f.Fd()), 1); err != nil {
		t.Skip(err)
	}
	err = WriteFile("/dev/stdout", []byte("to stdout\n"), 0o644)
	if err == nil {
		err = WriteFile("/proc/self/fd/1", []byte("again\n"), 0o644)
	}
	unix.Dup2(saved, 1)
	unix.Close(saved)
	if err != nil {
		t.Fatal(err)
	}
	// Each write opens the descriptor's file afresh and truncates it, as
	// a shell's redirection does; what matters is that the file stays
	// the one the descriptor has open.
	got := make([]byte, 64)
	nr, _ := f.ReadAt(got, 0) // through the descriptor: a rename would leave it the old file
	if string(got[:nr]) != "again\n" {
		t.Fatalf("stdout got %q", got[:nr])
	}
	if b, _ := os.ReadFile(out); string(b) != "again\n" {
		t.Fatalf("the file holds %q", b)
	}
	if after, err := os.Lstat("/dev/stdout"); err != nil || after.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("/dev/stdout is no longer a link: %v", err)
	}
}

// TestWritable checks the errors of Writable and that it leaves nothing
// behind.
func TestWritable(t *testing.T) {
	dir := t.TempDir()
	if err := Writable(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("Writable(dir) = %v", err)
	}
	if err := Writable(filepath.Join(dir, "new")); err != nil {
		t.Fatal(err)
	}
	if err := Writable(filepath.Join(dir, "missing", "new")); err == nil {
		t.Fatal("Writable in a missing directory succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("Writable left %v", entries)
	}
}

// TestWriteFailureKeepsFile checks that a write into a directory that
// cannot take the temporary file fails and leaves the file as it was.
func TestWriteFailureKeepsFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write in a read-only directory")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	if err := WriteFile(path, []byte("new"), 0o644); err == nil {
		t.Fatal("write in a read-only directory succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("file holds %q", got)
	}
}
