// Package mapfile maps a trace file read-only into memory for the decoders that read a file as
// one byte slice (perf.data, trace.dat). Its pages come from the page cache as the decoder
// touches them, and the kernel can drop them again under memory pressure, where reading the file
// whole first copied all of it onto the heap (a 2 GiB upload: 2 GiB of heap before the first
// event). A file that cannot be mapped (empty, or on a file system without mmap) is read whole
// instead. The file must not shrink while it is mapped (a read past its new end faults); the
// importer maps its own upload or the file it is given, which nothing else writes.
package mapfile

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Open returns the file's contents and a function that releases them; nothing read from the
// slice may be kept past that call (decoders copy what they keep: strings, numbers).
func Open(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close() // a mapping outlives its descriptor
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if !st.Mode().IsRegular() || size == 0 {
		return readWhole(path)
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("mapfile: %s: %d bytes do not fit in memory", path, size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
	if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EINVAL) {
		return readWhole(path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("mapfile: mmap %s: %w", path, err)
	}
	return b, func() error { return unix.Munmap(b) }, nil
}

func readWhole(path string) ([]byte, func() error, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// With maps the file at path, hands its contents to read and releases them when read returns
// (read must keep nothing of them past its return); a release error is returned when read's is
// nil.
func With[T any](path string, read func([]byte) (T, error)) (out T, err error) {
	b, done, err := Open(path)
	if err != nil {
		return out, err
	}
	defer func() {
		if cerr := done(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return read(b)
}
