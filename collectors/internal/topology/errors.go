package topology

import (
	"errors"
	"fmt"
)

// Errors Read returns, matched with errors.Is. Every file-specific one comes wrapped in a
// *FileError naming the file.
var (
	// ErrNoSysfs: the root holds no sys/devices/system/cpu (e.g. a CPUID-only dump).
	ErrNoSysfs = errors.New("no sysfs CPU topology")
	// ErrMalformed: a file could not be parsed (bad cpulist, bad number...).
	ErrMalformed = errors.New("malformed sysfs file")
	// ErrInconsistent: files contradict each other (a *_map that disagrees with its
	// *_list twin, sibling sets that overlap without being equal, a CPU in two nodes).
	ErrInconsistent = errors.New("inconsistent sysfs topology")
)

// FileError says which file is wrong and why.
type FileError struct {
	Path   string // full path of the offending file
	Err    error  // ErrMalformed or ErrInconsistent
	Detail string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %v: %s", e.Path, e.Err, e.Detail) }
func (e *FileError) Unwrap() error { return e.Err }
