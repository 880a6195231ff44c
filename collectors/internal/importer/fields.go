package importer

// fields.go owns the parsing of sched tracepoint bodies (the text after `event: `), in
// both the kernel's TP_printk form (`comm=... pid=N prio=N target_cpu=N`) and
// trace-cmd's plugin form (`comm:pid [prio] CPU:NNN`, `a:1 [120] S ==> b:2 [120]`).
//
// A comm is up to 15 arbitrary bytes (spaces, `=`, `:`, text that looks like another
// field), so fields are never split on spaces: each parser anchors on the field sequence
// the format defines after the comm, trying the separator candidates inside the 15-byte
// window from the right (the real separator is the last one that starts a complete,
// valid suffix) and only then further right for tools that print longer names.
// Anything after the last known field is trailing text (hand annotations): the event is
// kept and the caller is told (annotated).

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"placemap/collectors/internal/schema"
)

const maxComm = 15

// parseUint reads decimal digits at b[i:]; ok is false when there are none or more
// than 18 (no overflow is possible below that, so the loop checks nothing else).
func parseUint(b []byte, i int) (v int64, j int, ok bool) {
	j = i
	for j < len(b) {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		v = v*10 + int64(c)
		j++
	}
	if j == i || j-i > 18 {
		return 0, i, false
	}
	return v, j, true
}

// parseInt32 reads an optionally negative decimal that fits int32.
func parseInt32(b []byte, i int) (int32, int, bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	v, j, ok := parseUint(b, i)
	if !ok || v > 1<<31 || (!neg && v > 1<<31-1) {
		return 0, i, false
	}
	if neg {
		v = -v
	}
	return int32(v), j, true
}

// lit reports whether b[i:] starts with s and returns the index after it.
func lit(b []byte, i int, s string) (int, bool) {
	if len(b)-i < len(s) || string(b[i:i+len(s)]) != s {
		return i, false
	}
	return i + len(s), true
}

// fieldKey is a field key (` pid=`) prepared for keyInt: its first and last 8 bytes
// (4 for keys shorter than 8) as little-endian words, so the match is two loads and
// two compares instead of a call into memequal (keys are 5-12 bytes).
type fieldKey struct {
	n           int
	lo, hi, mid uint64 // mid: the 8 bytes around the middle, for keys of 17-24 bytes
}

func mkKey(s string) fieldKey {
	if len(s) < 4 || len(s) > 24 {
		panic("fieldKey: keys have 4 to 24 bytes")
	}
	b := []byte(s)
	if len(s) >= 8 {
		return fieldKey{len(s), binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[len(b)-8:]), binary.LittleEndian.Uint64(b[len(b)/2-4:])}
	}
	return fieldKey{n: len(s), lo: uint64(binary.LittleEndian.Uint32(b)), hi: uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))}
}

var (
	kPid       = mkKey(" pid=")
	kPrio      = mkKey(" prio=")
	kTargetCPU = mkKey(" target_cpu=")
	kOrigCPU   = mkKey(" orig_cpu=")
	kDestCPU   = mkKey(" dest_cpu=")
	kPrevPid   = mkKey(" prev_pid=")
	kPrevPrio  = mkKey(" prev_prio=")
	kNextPid   = mkKey(" next_pid=")
	kNextPrio  = mkKey(" next_prio=")
	kChildPid  = mkKey(" child_pid=")
	kOldPid    = mkKey(" old_pid=")
	kCPU       = mkKey(" CPU:")
)

// keyInt parses key immediately followed by an int32 at b[i:]. It is the hottest
// helper, so the key check and the digits loop are written out (one call, not three).
// Keys here are at most 16 bytes, which the first and last words cover.
func keyInt(b []byte, i int, key fieldKey) (int32, int, bool) {
	j := i + key.n
	if i < 0 || j > len(b) {
		return 0, i, false
	}
	if key.n >= 8 {
		if binary.LittleEndian.Uint64(b[i:]) != key.lo || binary.LittleEndian.Uint64(b[j-8:]) != key.hi {
			return 0, i, false
		}
	} else if uint64(binary.LittleEndian.Uint32(b[i:])) != key.lo || uint64(binary.LittleEndian.Uint32(b[j-4:])) != key.hi {
		return 0, i, false
	}
	neg := j < len(b) && b[j] == '-'
	if neg {
		j++
	}
	k := j
	var v int64
	for k < len(b) {
		c := b[k] - '0'
		if c > 9 {
			break
		}
		v = v*10 + int64(c)
		k++
	}
	if k == j || k-j > 10 || v > 1<<31 || (!neg && v > 1<<31-1) {
		return 0, i, false
	}
	if neg {
		v = -v
	}
	return int32(v), k, true
}

// atEnd reports whether b[i:] ends the known fields: end of body or whitespace
// (trailing text is then an annotation).
func atEnd(b []byte, i int) bool { return i == len(b) || b[i] == ' ' || b[i] == '\t' }

// trailing reports whether anything but whitespace follows i.
func trailing(b []byte, i int) bool {
	for ; i < len(b); i++ {
		if b[i] != ' ' && b[i] != '\t' {
			return true
		}
	}
	return false
}

// candidates calls try for separator positions p in [start, start+maxComm] where
// b[p] == sep, from the right, then for positions further right, from the left; it
// stops at the first try that succeeds.
func candidates(b []byte, start int, sep byte, try func(p int) bool) bool {
	hi := start + maxComm
	if hi > len(b)-1 {
		hi = len(b) - 1
	}
	for p := hi; p >= start; p-- {
		if b[p] == sep && try(p) {
			return true
		}
	}
	for p := hi + 1; p < len(b); p++ {
		if b[p] == sep && try(p) {
			return true
		}
	}
	return false
}

// wakeKernel: comm=%s pid=%d prio=%d [success=%d] [target_cpu=%03d]
func wakeKernel(b []byte, e *event) (ok, annotated bool) {
	c0, okc := lit(b, 0, "comm=")
	if !okc {
		return false, false
	}
	// the candidates loop written out (this is the hottest body form)
	hi := min(c0+maxComm, len(b)-1)
	for p := hi; p >= c0; p-- {
		if b[p] == ' ' {
			if end, ok := wakeKernelAt(b, c0, p, e); ok {
				return true, trailing(b, end)
			}
		}
	}
	for p := hi + 1; p < len(b); p++ {
		if b[p] == ' ' {
			if end, ok := wakeKernelAt(b, c0, p, e); ok {
				return true, trailing(b, end)
			}
		}
	}
	return false, false
}

// wakeKernelAt validates ` pid=N prio=N [success=N] [target_cpu=N]` at b[p:].
func wakeKernelAt(b []byte, c0, p int, e *event) (int, bool) {
	pid, i, ok := keyInt(b, p, kPid)
	if !ok {
		return 0, false
	}
	prio, i, ok := keyInt(b, i, kPrio)
	if !ok || !atEnd(b, i) {
		return 0, false
	}
	if j, ok := lit(b, i, " success="); ok {
		if _, j, ok = parseInt32(b, j); !ok || !atEnd(b, j) {
			return 0, false
		}
		i = j
	}
	e.hasA = false
	if t, j, ok := keyInt(b, i, kTargetCPU); ok && atEnd(b, j) {
		e.a, e.hasA, i = t, true, j
	}
	e.comm, e.pid, e.prio, e.hasPrio = b[c0:p], pid, prio, true
	return i, true
}

// migrate: comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d
func migrateKernel(b []byte, e *event) (ok, annotated bool) {
	c0, okc := lit(b, 0, "comm=")
	if !okc {
		return false, false
	}
	found := candidates(b, c0, ' ', func(p int) bool {
		pid, i, ok := keyInt(b, p, kPid)
		if !ok {
			return false
		}
		prio, i, ok := keyInt(b, i, kPrio)
		if !ok {
			return false
		}
		o, i, ok := keyInt(b, i, kOrigCPU)
		if !ok {
			return false
		}
		d, i, ok := keyInt(b, i, kDestCPU)
		if !ok || !atEnd(b, i) {
			return false
		}
		e.comm, e.pid, e.prio, e.hasPrio, e.a, e.b = b[c0:p], pid, prio, true, o, d
		annotated = trailing(b, i)
		return true
	})
	return found, annotated
}

// switchKernel: prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s [==>] next_comm=%s next_pid=%d next_prio=%d
func switchKernel(b []byte, e *event) (ok, annotated bool) {
	c0, okc := lit(b, 0, "prev_comm=")
	if !okc {
		return false, false
	}
	hi := min(c0+maxComm, len(b)-1)
	for p := hi; p >= c0; p-- {
		if b[p] == ' ' {
			if end, ok := switchKernelAt(b, c0, p, e); ok {
				return true, trailing(b, end)
			}
		}
	}
	for p := hi + 1; p < len(b); p++ {
		if b[p] == ' ' {
			if end, ok := switchKernelAt(b, c0, p, e); ok {
				return true, trailing(b, end)
			}
		}
	}
	return false, false
}

// switchKernelAt validates the fields after a prev_comm that ends at p.
func switchKernelAt(b []byte, c0, p int, e *event) (int, bool) {
	pid, i, ok := keyInt(b, p, kPrevPid)
	if !ok {
		return 0, false
	}
	prio, i, ok := keyInt(b, i, kPrevPrio)
	if !ok {
		return 0, false
	}
	if i, ok = lit(b, i, " prev_state="); !ok {
		return 0, false
	}
	s0 := i
	for i < len(b) && b[i] != ' ' {
		i++
	}
	state := b[s0:i]
	if j, ok := lit(b, i, " ==>"); ok {
		i = j
	}
	n0, ok := lit(b, i, " next_comm=")
	if !ok {
		return 0, false
	}
	hi := min(n0+maxComm, len(b)-1)
	for q := hi; q >= n0; q-- {
		if b[q] == ' ' {
			if end, ok := switchNextAt(b, n0, q, e); ok {
				e.comm, e.pid, e.prio, e.hasPrio, e.prevState = b[c0:p], pid, prio, true, state
				return end, true
			}
		}
	}
	for q := hi + 1; q < len(b); q++ {
		if b[q] == ' ' {
			if end, ok := switchNextAt(b, n0, q, e); ok {
				e.comm, e.pid, e.prio, e.hasPrio, e.prevState = b[c0:p], pid, prio, true, state
				return end, true
			}
		}
	}
	return 0, false
}

// switchNextAt validates ` next_pid=N next_prio=N` after a next_comm that ends at q.
func switchNextAt(b []byte, n0, q int, e *event) (int, bool) {
	np, j, ok := keyInt(b, q, kNextPid)
	if !ok {
		return 0, false
	}
	nprio, j, ok := keyInt(b, j, kNextPrio)
	if !ok || !atEnd(b, j) {
		return 0, false
	}
	e.nextComm, e.nextPid, e.nextPrio, e.hasNPrio = b[n0:q], np, nprio, true
	return j, true
}

// forkKernel: comm=%s pid=%d child_comm=%s child_pid=%d
func forkKernel(b []byte, e *event) (ok, annotated bool) {
	c0, okc := lit(b, 0, "comm=")
	if !okc {
		return false, false
	}
	found := candidates(b, c0, ' ', func(p int) bool {
		pid, i, ok := keyInt(b, p, kPid)
		if !ok {
			return false
		}
		k0, ok := lit(b, i, " child_comm=")
		if !ok {
			return false
		}
		var end int
		if !candidates(b, k0, ' ', func(q int) bool {
			cp, j, ok := keyInt(b, q, kChildPid)
			if !ok || !atEnd(b, j) {
				return false
			}
			e.childComm, e.childPid, end = b[k0:q], cp, j
			return true
		}) {
			return false
		}
		e.comm, e.pid, e.hasPrio = b[c0:p], pid, false
		annotated = trailing(b, end)
		return true
	})
	return found, annotated
}

// exitKernel: comm=%s pid=%d prio=%d [group_dead=true|false]
func exitKernel(b []byte, e *event) (ok, annotated bool) {
	c0, okc := lit(b, 0, "comm=")
	if !okc {
		return false, false
	}
	found := candidates(b, c0, ' ', func(p int) bool {
		pid, i, ok := keyInt(b, p, kPid)
		if !ok {
			return false
		}
		prio, i, ok := keyInt(b, i, kPrio)
		if !ok || !atEnd(b, i) {
			return false
		}
		if j, ok := lit(b, i, " group_dead="); ok {
			if k, ok := lit(b, j, "true"); ok && atEnd(b, k) {
				i = k
			} else if k, ok := lit(b, j, "false"); ok && atEnd(b, k) {
				i = k
			} else if _, k, ok := parseInt32(b, j); ok && atEnd(b, k) {
				i = k
			}
		}
		e.comm, e.pid, e.prio, e.hasPrio = b[c0:p], pid, prio, true
		annotated = trailing(b, i)
		return true
	})
	return found, annotated
}

// execKernel: filename=%s pid=%d old_pid=%d. The file name has no length limit, so the
// pid fields are the right-most ` pid=N old_pid=N` that ends the known fields.
func execKernel(b []byte, e *event) (ok, annotated bool) {
	f0, okf := lit(b, 0, "filename=")
	if !okf {
		return false, false
	}
	end := len(b)
	for end > f0 {
		p := bytes.LastIndex(b[f0:end], []byte(" pid="))
		if p < 0 {
			return false, false
		}
		p += f0
		pid, i, ok := keyInt(b, p, kPid)
		if ok {
			var old int32
			if old, i, ok = keyInt(b, i, kOldPid); ok && atEnd(b, i) {
				e.filename, e.pid, e.oldPid, e.hasPrio = b[f0:p], pid, old, false
				return true, trailing(b, i)
			}
		}
		end = p
	}
	return false, false
}

// parseBody fills e from the body of a sched event of kind k.
func parseBody(k schema.Kind, b []byte, e *event) (ok, annotated bool) {
	switch k {
	case schema.KindWakeupNew, schema.KindWaking, schema.KindWakeup:
		if ok, ann := wakeKernel(b, e); ok {
			return ok, ann
		}
		return wakeTracecmd(b, e)
	case schema.KindMigrate:
		return migrateKernel(b, e)
	case schema.KindSwitch:
		if ok, ann := switchKernel(b, e); ok {
			return ok, ann
		}
		return switchTracecmd(b, e)
	case schema.KindFork:
		return forkKernel(b, e)
	case schema.KindExit:
		return exitKernel(b, e)
	case schema.KindExec:
		return execKernel(b, e)
	}
	return false, false
}

// sched event names -> kinds. The names are 12-18 bytes, so each is matched as its
// first, middle and last 8 bytes (three word loads, which cover up to 24 bytes) after a
// check of the length: a string switch would binary-search with calls into the
// runtime's string compare per line.
var kindNames = [...]struct {
	key  fieldKey
	kind schema.Kind
}{
	{mkKey("sched_switch"), schema.KindSwitch},
	{mkKey("sched_waking"), schema.KindWaking},
	{mkKey("sched_wakeup"), schema.KindWakeup},
	{mkKey("sched_wakeup_new"), schema.KindWakeupNew},
	{mkKey("sched_migrate_task"), schema.KindMigrate},
	{mkKey("sched_process_fork"), schema.KindFork},
	{mkKey("sched_process_exit"), schema.KindExit},
	{mkKey("sched_process_exec"), schema.KindExec},
}

func kindOf(name []byte) (schema.Kind, bool) {
	n := len(name)
	if n != 12 && n != 16 && n != 18 {
		return 0, false
	}
	lo, hi, mid := binary.LittleEndian.Uint64(name), binary.LittleEndian.Uint64(name[n-8:]), binary.LittleEndian.Uint64(name[n/2-4:])
	for i := range kindNames {
		k := &kindNames[i].key
		if k.n == n && k.lo == lo && k.hi == hi && k.mid == mid {
			return kindNames[i].kind, true
		}
	}
	return 0, false
}

// escapeInto returns s when it is valid UTF-8, else s with each invalid byte written
// as \xNN, appended to scratch.
func escapeInto(scratch []byte, s []byte) (out []byte, scratchOut []byte, escaped bool) {
	ascii := true
	for _, c := range s {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii || utf8.Valid(s) {
		return s, scratch, false
	}
	start := len(scratch)
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size <= 1 {
			scratch = append(scratch, '\\', 'x', hex[s[i]>>4], hex[s[i]&15])
			i++
			continue
		}
		scratch = append(scratch, s[i:i+size]...)
		i += size
	}
	return scratch[start:], scratch, true
}
