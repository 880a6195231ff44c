package importer

// ftrace.go owns the line prefix of ftrace `trace`/`trace_pipe` text and of
// `trace-cmd report` text:
//
//	TASK-PID [(TGID)] [CPU] [FLAGS] TIMESTAMP: EVENT: BODY
//
// The TASK comm may hold spaces and dashes: the pid follows the last dash before the
// [CPU] column, found by trying dashes inside the 15-byte comm window from the right
// and keeping the first one that is followed by a complete prefix. FLAGS is the
// irq-info column (4 or 5 characters, absent when options/irq-info is off).

import (
	"encoding/binary"
	"math/bits"
)

// prefix is what precedes the event body.
type prefix struct {
	ts      int64
	rawTs   bool // timestamp had no decimal point (x86-tsc, counter clocks)
	cpu     int32
	curPid  int32
	tgid    int32
	hasTgid bool
	comm    []byte
	name    []byte // event name; nil for lines with no `name:` (function tracer)
	body    []byte
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

func skipSpaces(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// pow10[n] is 10^n: scales a fraction of 9-n digits to nanoseconds in one multiply.
var pow10 = [10]int64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000}

// parseTs reads `secs[.frac]:` at b[i:] into nanoseconds (frac of 1..9 digits; 6 =
// usecs, 9 = nsecs) or, without a decimal point, the raw counter value.
func parseTs(b []byte, i int) (ts int64, raw bool, j int, ok bool) {
	secs, j, ok := parseUint(b, i)
	if !ok {
		return 0, false, i, false
	}
	if j < len(b) && b[j] == '.' {
		f0 := j + 1
		frac, k, ok := parseUint(b, f0)
		nd := k - f0
		if !ok || nd > 9 || secs > (1<<63-1)/1_000_000_000-1 {
			return 0, false, i, false
		}
		ts, j = secs*1_000_000_000+frac*pow10[9-nd], k
	} else {
		ts, raw = secs, true
	}
	if j >= len(b) || b[j] != ':' {
		return 0, false, i, false
	}
	return ts, raw, j + 1, true
}

// toSpace returns the index of the first byte <= ' ' at or after b[i:], or len(b). It
// tests eight bytes per step: a byte below 0x21 borrows in x - 0x21... and keeps its
// top bit in ^x; bytes above the first such byte may be flagged by the borrow too,
// so only the lowest flag is used, and it is exact.
func toSpace(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := (x - 0x2121212121212121) & ^x & 0x8080808080808080; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && b[i] > ' ' {
		i++
	}
	return i
}

// eventName reads `name:` followed by a space or the end of the line at b[i:]; names
// hold no spaces. For perf, names carry their subsystem (`sched:sched_switch`), so the
// name ends at the last `:` before the first space.
func eventName(b []byte, i int) (name []byte, j int) {
	k := toSpace(b, i)
	if k == i || b[k-1] != ':' || (k < len(b) && b[k] != ' ' && b[k] != '\t') {
		return nil, i
	}
	return b[i : k-1], skipSpaces(b, k)
}

// tail parses `[FLAGS] TIMESTAMP: EVENT: BODY` after the [CPU] column.
func tail(b []byte, i int, p *prefix) bool {
	i = skipSpaces(b, i)
	if i < len(b) && (b[i] < '0' || b[i] > '9') {
		// irq-info flags column (its first character is never a digit)
		k := i
		for k < len(b) && b[k] != ' ' && b[k] != '\t' {
			k++
		}
		if k-i > 8 {
			return false
		}
		i = skipSpaces(b, k)
	}
	ts, raw, j, ok := parseTs(b, i)
	if !ok {
		return false
	}
	p.ts, p.rawTs = ts, raw
	if j < len(b) && !isSpace(b[j]) {
		return false
	}
	j = skipSpaces(b, j)
	p.name, p.body = nil, nil
	if name, k := eventName(b, j); name != nil {
		p.name, p.body = name, b[k:]
	} else {
		p.body = b[j:]
	}
	return true
}

// cpuCol parses `[N]` at b[i:].
func cpuCol(b []byte, i int) (int32, int, bool) {
	if i >= len(b) || b[i] != '[' {
		return 0, i, false
	}
	v, j, ok := parseUint(b, i+1)
	if !ok || j >= len(b) || b[j] != ']' || v > 1<<30 {
		return 0, i, false
	}
	return int32(v), j + 1, true
}

// ftracePrefix parses an ftrace / trace-cmd line's prefix.
func ftracePrefix(b []byte, p *prefix) bool {
	s := skipSpaces(b, 0)
	hi := s + maxComm
	if hi > len(b)-1 {
		hi = len(b) - 1
	}
	for d := hi; d >= s; d-- {
		if b[d] != '-' {
			continue
		}
		pid, i, ok := parseUint(b, d+1)
		if !ok || pid > 1<<31-1 {
			continue
		}
		i = skipSpaces(b, i)
		p.hasTgid = false
		if i < len(b) && b[i] == '(' {
			// record-tgid column: (  1234) or (-------)
			j := skipSpaces(b, i+1)
			if tg, k, ok := parseUint(b, j); ok && k < len(b) && b[k] == ')' {
				p.tgid, p.hasTgid, i = int32(tg), true, k+1
			} else {
				for j < len(b) && b[j] == '-' {
					j++
				}
				if j >= len(b) || b[j] != ')' {
					continue
				}
				i = j + 1
			}
			i = skipSpaces(b, i)
		}
		cpu, i, ok := cpuCol(b, i)
		if !ok || !tail(b, i, p) {
			continue
		}
		p.cpu, p.curPid, p.comm = cpu, int32(pid), b[s:d]
		return true
	}
	return false
}
