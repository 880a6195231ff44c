//go:build unix

package importer

// mmap_unix.go owns the importer's use of OS facilities: it maps a plain input file
// into memory (the parse workers then read the page cache directly instead of the
// reader goroutine copying every byte into chunk buffers with read(2), 1.4 GB of
// copies for a 10M-event trace) and widens a stdout pipe for the chunk output.

import (
	"io"
	"os"
	"syscall"
)

// mapPlain returns f's bytes mapped read-only, or nil when f is not a non-empty
// regular file, is gzip (it is decompressed through a reader), or cannot be mapped.
func mapPlain(f *os.File) []byte {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < 2 || st.Size() != int64(int(st.Size())) {
		return nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	if m[0] == 0x1f && m[1] == 0x8b {
		_ = syscall.Munmap(m)
		return nil
	}
	return m
}

func unmap(m []byte) { _ = syscall.Munmap(m) }

// widenPipe raises w's pipe buffer to 1 MB when w is a pipe (the backend reads chunk
// frames through one): a 1 MB frame write then wakes the reader once instead of once
// per 64 KB, which halves the kernel time spent switching between the two. Not a pipe,
// or a kernel that refuses: nothing changes.
func widenPipe(w io.Writer) {
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), 1031, 1<<20) // F_SETPIPE_SZ
}
