package live

// host.go owns the host-level records: per-LLC utilization from /proc/stat (busy time of
// the LLC's CPUs over the sampling interval) and lost-event records from the growth of
// the kernel's per-CPU stats (overrun + dropped events).

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracefs"
)

// cpuTimes is one /proc/stat cpuN line: busy and total jiffies.
type cpuTimes struct{ busy, total uint64 }

// readProcStat parses the per-CPU lines of /proc/stat (path for tests).
func readProcStat(path string) (map[int]cpuTimes, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[int]cpuTimes{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil {
			continue
		}
		var t cpuTimes
		// user nice system idle iowait irq softirq steal (guest is inside user already)
		for i, s := range f[1:min(len(f), 9)] {
			v, _ := strconv.ParseUint(s, 10, 64)
			t.total += v
			if i != 3 && i != 4 { // idle, iowait
				t.busy += v
			}
		}
		out[n] = t
	}
	return out, sc.Err()
}

// UtilSampler turns successive /proc/stat reads into llc_util events.
type UtilSampler struct {
	Path string  // /proc/stat
	LLCs [][]int // CPUs of each LLC, by dense LLC index
	prev map[int]cpuTimes
}

// Sample appends one llc_util event per LLC (none on the first call, which only sets
// the baseline) at ts.
func (u *UtilSampler) Sample(ts int64, out []tracefs.Event) []tracefs.Event {
	cur, err := readProcStat(u.Path)
	if err != nil {
		return out
	}
	if u.prev != nil {
		for i, cpus := range u.LLCs {
			var busy, total uint64
			for _, c := range cpus {
				a, ok1 := u.prev[c]
				b, ok2 := cur[c]
				if ok1 && ok2 && b.total >= a.total && b.busy >= a.busy {
					busy += b.busy - a.busy
					total += b.total - a.total
				}
			}
			if total == 0 {
				continue // no tick elapsed on these CPUs yet: no sample rather than a made-up 0
			}
			out = append(out, tracefs.Event{TsNs: ts, CPU: -1, Kind: schema.KindLlcUtil, LLC: int32(i), Util: float32(busy) / float32(total)})
		}
	}
	u.prev = cur
	return out
}

// LostTracker turns growth of per-CPU (overrun + dropped) into lost events.
type LostTracker struct {
	CPUs []int
	prev []int64
	// Total is every loss reported so far, by position in CPUs.
	Total []int64
}

// Update appends a lost event for each CPU whose losses grew since the last call.
func (l *LostTracker) Update(ts int64, st []tracefs.CPUStats, out []tracefs.Event) []tracefs.Event {
	if l.prev == nil {
		l.prev = make([]int64, len(l.CPUs))
		l.Total = make([]int64, len(l.CPUs))
	}
	for i := range st {
		if i >= len(l.CPUs) {
			break
		}
		n := st[i].Overrun + st[i].Dropped
		if d := n - l.prev[i]; d > 0 {
			out = append(out, tracefs.Event{TsNs: ts, CPU: int32(l.CPUs[i]), Kind: schema.KindLost, LostEvents: d})
			l.Total[i] += d
		}
		l.prev[i] = max(l.prev[i], n)
	}
	return out
}
