package importer

// perf.go owns the line prefix of `perf script` text (default fields for tracepoints):
//
//	COMM PID[/TID] [CPU] SECS.USECS: SUBSYS:EVENT: BODY
//
// COMM is right-aligned in 16 columns and may hold spaces; the [CPU] column is the first
// `[N]` preceded by a pid that is followed by a complete prefix. With `-F pid,tid` the
// pid is `PID/TID`: cur_pid is the tid and tgid the pid.

func perfPrefix(b []byte, p *prefix) bool {
	s := skipSpaces(b, 0)
	for k := s + 1; k < len(b); k++ {
		if b[k] != '[' {
			continue
		}
		if k-s > 64 {
			return false
		}
		// walk back over spaces and the PID[/TID]
		j := k - 1
		if !isSpace(b[j]) {
			continue
		}
		for j > s && isSpace(b[j]) {
			j--
		}
		e := j + 1
		for j >= s && (b[j] >= '0' && b[j] <= '9' || b[j] == '/') {
			j--
		}
		d0 := j + 1
		if d0 >= e || (j >= s && !isSpace(b[j])) {
			continue
		}
		first, i, ok := parseUint(b, d0)
		if !ok || first > 1<<31-1 {
			continue
		}
		cur, tgid, hasTgid := first, int64(0), false
		if i < e && b[i] == '/' {
			tid, i2, ok := parseUint(b, i+1)
			if !ok || i2 != e || tid > 1<<31-1 {
				continue
			}
			cur, tgid, hasTgid = tid, first, true
		} else if i != e {
			continue
		}
		cpu, i, ok := cpuCol(b, k)
		if !ok || !tail(b, i, p) {
			continue
		}
		c1 := j
		if c1 < s {
			c1 = s
		}
		for c1 > s && isSpace(b[c1-1]) {
			c1--
		}
		p.cpu, p.curPid, p.tgid, p.hasTgid, p.comm = cpu, int32(cur), int32(tgid), hasTgid, b[s:c1]
		return true
	}
	return false
}

// perfSched maps a perf event name (`sched:sched_switch`) to the tracepoint name.
func perfSched(name []byte) []byte {
	if len(name) > 6 && string(name[:6]) == "sched:" {
		return name[6:]
	}
	return nil
}
