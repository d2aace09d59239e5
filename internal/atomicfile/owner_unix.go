//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of the file fi describes when the
// process runs as root (only root may give a file away).
func keepOwner(f *os.File, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return nil
	}
	if int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return nil
	}
	return f.Chown(int(st.Uid), int(st.Gid))
}

// accessWrite returns an error if the process may not open path for
// writing. It does not open it: opening a FIFO for writing blocks until
// a reader comes.
func accessWrite(path string) error {
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	return nil
}
