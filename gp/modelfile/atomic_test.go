package modelfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteAtomic checks that WriteAtomic replaces a file with what its
// callback streams, and that a callback error leaves the old file and no
// temporary file behind.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.bin")
	if err := WriteFileAtomic(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 3<<20) // more than the writer's buffer
	for i := range big {
		big[i] = byte(i * 7)
	}
	if err := WriteAtomic(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(big[:1000])
		if err == nil {
			_, err = w.Write(big[1000:])
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(big) {
		t.Fatalf("file after WriteAtomic: %d bytes, %v", len(got), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	boom := errors.New("boom")
	err = WriteAtomic(path, 0o644, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("callback error: got %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(big) {
		t.Fatal("a failed write changed the file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("files left behind: %v", entries)
	}
	// A panic in the callback propagates, and takes the temporary file
	// with it.
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want the callback's panic", r)
			}
		}()
		WriteAtomic(path, 0o644, func(w io.Writer) error {
			w.Write([]byte("partial"))
			panic("boom")
		})
	}()
	if got, _ := os.ReadFile(path); string(got) != string(big) {
		t.Fatal("a panicking write changed the file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files left behind after a panic: %v", entries)
	}
}

// TestWriteAtomicNilWrite checks that a nil callback is an error that
// leaves the old file and no temporary file behind.
func TestWriteAtomicNilWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		err = WriteAtomic(path, 0o644, nil)
	}()
	if err == nil || !strings.Contains(err.Error(), "nil write function") {
		t.Fatalf("WriteAtomic with a nil callback: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("file is now %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files left behind: %v", entries)
	}
}
