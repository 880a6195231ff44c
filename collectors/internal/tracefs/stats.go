package tracefs

import (
	"strconv"
	"strings"
)

// CPUStats is one per_cpu/cpuN/stats file: the kernel's own counters for that CPU's
// ring buffer (what a decode must agree with: entries = records read when nothing was
// consumed before; overrun + dropped = events lost).
type CPUStats struct {
	Entries, Overrun, CommitOverrun, Bytes, Dropped, Read int64
}

// ParseStats parses one or more concatenated per-CPU stats files (each starts with
// "entries:"), in order. Unknown lines are ignored.
func ParseStats(text string) []CPUStats {
	var out []CPUStats
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if k == "entries" {
			out = append(out, CPUStats{})
		}
		if err != nil || len(out) == 0 {
			continue
		}
		s := &out[len(out)-1]
		switch k {
		case "entries":
			s.Entries = n
		case "overrun":
			s.Overrun = n
		case "commit overrun":
			s.CommitOverrun = n
		case "bytes":
			s.Bytes = n
		case "dropped events":
			s.Dropped = n
		case "read events":
			s.Read = n
		}
	}
	return out
}
