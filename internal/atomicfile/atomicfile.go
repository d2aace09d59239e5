// Package atomicfile writes output files so that a failed or interrupted
// write never leaves a partial file where a complete one was, without
// breaking outputs that are not regular files.
//
// A regular file (or a path that does not exist yet) is written to a
// temporary file in the same directory, synced to stable storage and
// renamed over the path: readers see either the earlier file or the
// complete new one. An existing file keeps its permission bits, and its
// owner and group when the process runs as root. A symbolic link is
// followed to its target, which is replaced; the link itself stays.
//
// Anything else — a character or block device such as /dev/null, a FIFO,
// a terminal, or a descriptor named through /dev/stdout or /dev/fd/N — is
// opened and written directly: renaming a regular file over it would
// destroy it (as root) or fail (otherwise), and its reader would get
// nothing. Such writes are not atomic.
//
// Renaming gives the path a new inode, so other hard links to an existing
// file keep the earlier content.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the symbolic links followed from one path, as the
// kernel's ELOOP limit does.
const maxLinks = 40

// WriteFile writes content to path as Write does.
func WriteFile(path string, content []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(content)
		return err
	})
}

// Write writes what write produces to path; write receives a buffered
// writer, so large content need not be held in memory. perm is the mode
// of a newly created file (the umask is not applied); an existing file
// keeps its own. For a regular file, if write returns an error or panics
// the temporary file is removed and path is left as it was. A nil write is
// an error and creates nothing. Errors name path.
func Write(path string, perm os.FileMode, write func(io.Writer) error) error {
	if write == nil {
		return fmt.Errorf("atomicfile: writing %s: nil write function", path)
	}
	t, err := resolve(path)
	if err != nil {
		return err
	}
	if t.direct {
		return writeDirect(path, write)
	}
	return writeRenamed(path, t, perm, write)
}

// Writable returns an error if path cannot be written by Write: it is a
// directory, a special file the process may not open for writing, or a
// regular file whose directory does not admit a new file. It lets a
// command refuse an output before long work instead of after it. It
// neither creates path nor changes it.
func Writable(path string) error {
	t, err := resolve(path)
	if err != nil {
		return err
	}
	if t.info != nil && t.info.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	if t.direct {
		return accessWrite(path)
	}
	dir := filepath.Dir(t.path)
	tmp, err := os.CreateTemp(dir, ".atomicfile-test-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the error names the probe file, not path
		}
		return fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return nil
}

// target is where a path's content goes.
type target struct {
	// path is the file to replace: the path itself, or the end of its
	// chain of symbolic links.
	path string
	// info describes the existing file at path (nil if there is none).
	info os.FileInfo
	// direct means the file is opened and written in place.
	direct bool
}

// resolve follows path's symbolic links. A link in /proc or /dev/fd
// names an open descriptor (/dev/stdout leads to /proc/self/fd/1), and its
// text is not a path to rename over, so a chain through one is written
// directly, as is any existing file that is not regular.
func resolve(path string) (target, error) {
	if path == "" {
		return target{}, errors.New("atomicfile: empty path")
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return target{path: path, info: fi, direct: true}, nil
	}
	p := path
	for i := 0; ; i++ {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return target{path: p}, nil
		}
		if err != nil {
			return target{}, fmt.Errorf("atomicfile: %w", err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return target{path: p, info: fi, direct: !fi.Mode().IsRegular() && !fi.IsDir()}, nil
		}
		if descriptorPath(p) {
			return target{path: path, direct: true}, nil
		}
		if i == maxLinks {
			return target{}, fmt.Errorf("atomicfile: %s: too many levels of symbolic links", path)
		}
		link, err := os.Readlink(p)
		if err != nil {
			return target{}, fmt.Errorf("atomicfile: %w", err)
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
}

// descriptorPath reports whether p lies in /proc or /dev/fd, where links
// name open descriptors rather than files.
func descriptorPath(p string) bool {
	p = filepath.Clean(p)
	return strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/")
}

// writeDirect opens path for writing (truncating a regular file reached
// through a descriptor link, as a shell's redirection does) and writes
// to it in place.
func writeDirect(path string, write func(io.Writer) error) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("atomicfile: closing %s: %w", path, cerr)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	return nil
}

// writeRenamed writes through a temporary file beside t.path that is
// synced and renamed over it. name is the path the caller gave, for
// errors.
func writeRenamed(name string, t target, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(t.path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		// Also on a panic in write: the temporary file never outlives
		// a failed call.
		if !renamed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", name, err)
	}
	if t.info != nil {
		perm = t.info.Mode().Perm()
		if err = keepOwner(f, t.info); err != nil {
			return fmt.Errorf("atomicfile: %w", err)
		}
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("atomicfile: syncing %s: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("atomicfile: closing %s: %w", name, err)
	}
	if err = os.Rename(tmp, t.path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	renamed = true
	// Make the rename itself durable. Directories cannot be synced on
	// every system; a failure here does not undo the completed write.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
