package importer

// fast.go owns the fast path for the lines that make up nearly every ftrace capture:
// sched_switch, sched_waking, sched_wakeup, sched_wakeup_new and sched_migrate_task in
// the kernel's TP_printk form, parsed in one forward pass straight into the row
// columns (no event record in between, no calls per field).
//
// It takes a line only when the general parser (worker.line: ftracePrefix, tail,
// parseBody) would take it at its first candidate: the right-most dash in the TASK
// column's 16-byte window, the right-most space in each `comm=` window. The general
// parser tries those first and keeps the first that parses, so when the fast path
// parses at them with the same rules the row is the same. Anything else (another
// candidate, another event, trace-cmd's plugin form, trailing text, a non-ASCII comm,
// a CPU out of range, a lost or header line, the header's lost row still to place)
// returns false and goes the general way. FuzzFastLineMatchesGeneral holds the two
// paths to the same rows and statistics.

import (
	"encoding/binary"
	"math/bits"

	"placemap/collectors/internal/schema"
)

const (
	lo7    = 0x7f7f7f7f7f7f7f7f
	hi1    = 0x8080808080808080
	bytes1 = 0x0101010101010101
	zeros8 = 0x3030303030303030 // "00000000"
)

// eqMask has 0x80 in each byte of x that equals c, and nothing else (no borrows:
// (y&0x7f)+0x7f stays inside its byte).
func eqMask(x uint64, c byte) uint64 {
	y := x ^ (bytes1 * uint64(c))
	return ^((y&lo7 + lo7) | y | lo7)
}

// nonDigits has 0x80 in each byte of x that is not '0'..'9': a digit has high nibble 3,
// and its low 7 bits plus 6 keep high nibble 3 (no carry leaves a byte either way).
func nonDigits(x uint64) uint64 {
	a := x&0xf0f0f0f0f0f0f0f0 ^ zeros8
	b := (x&lo7+0x0606060606060606)&0xf0f0f0f0f0f0f0f0 ^ zeros8
	z := a | b
	return (z&lo7 + lo7 | z) & hi1
}

// spaceMask has 0x80 in each byte of x that is a space or a tab.
func spaceMask(x uint64) uint64 { return eqMask(x, ' ') | eqMask(x, '\t') }

// digits8 is the value of the first k (0..8) digit bytes of x (first byte most
// significant): the digits are shifted to the top so the bytes below act as leading
// zeros, then pairs, quads and octets are combined in place.
func digits8(x uint64, k int) int64 {
	v := (x - zeros8) << (64 - 8*uint(k)) // digit bytes never borrow: the ones below them are digits
	v = (v*10 + v>>8) & 0x00ff00ff00ff00ff
	v = (v*100 + v>>16) & 0x0000ffff0000ffff
	v = (v*10000 + v>>32) & 0xffffffff
	return int64(v)
}

// lastIn16 returns the index of the right-most c in b[a:a+16], or -1; b has those bytes.
func lastIn16(b []byte, a int, c byte) int {
	if m := eqMask(word(b, a+8), c); m != 0 {
		return a + 8 + (63-bits.LeadingZeros64(m))>>3
	}
	if m := eqMask(word(b, a), c); m != 0 {
		return a + (63-bits.LeadingZeros64(m))>>3
	}
	return -1
}

// word reads 8 bytes at b[i:] as a little-endian word.
func word(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

func w8(s string) uint64 { return binary.LittleEndian.Uint64([]byte(s)) }

var (
	wSchedWa  = w8("sched_wa")
	wSchedSw  = w8("sched_sw")
	wSchedMi  = w8("sched_mi")
	wWaking   = w8("_waking:")
	wWakeup   = w8("_wakeup:")
	wSwitch   = w8("_switch:")
	wKeupNew  = w8("keup_new")
	wGrateTa  = w8("grate_ta")
	wComm     = w8("comm=\x00\x00\x00") & 0xffffffffff
	wPrevComm = w8("prev_com")
	wPrevStat = w8(" prev_st")
	wNextComm = w8(" next_co")
)

// The scanners below read whole words past the line's end: the caller guarantees 8
// bytes after it (the line's own newline and what follows in the chunk), and that the
// byte at the end is '\n' or '\r', which no scan takes for a digit or a space.

// skipWS returns the index of the first byte at or after i that is not a space or tab.
func skipWS(b []byte, i int) int {
	for b[i] == ' ' || b[i] == '\t' {
		i++
	}
	return i
}

// num reads the decimal digits at b[i:]: value and the index after them (v is only
// meaningful for up to 18 digits; callers bound the count).
func num(b []byte, i int) (v int64, j int) {
	for j = i; ; j++ {
		c := b[j] - '0'
		if c > 9 {
			return v, j
		}
		v = v*10 + int64(c)
	}
}

// id reads 1 to 7 digits at b[i:] (a pid, a CPU, a tgid); ok is false for anything
// else (no digit, a sign, 8 or more digits), which the general parser then reads.
// Numbers here have 1-7 digits, so a byte loop beats a word-at-a-time conversion.
func id(b []byte, i int) (int32, int, bool) {
	v, j := int32(0), i
	for ; ; j++ {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		v = v*10 + int32(c)
	}
	return v, j, j > i && j-i < 8
}

// keyID reads key then id() at b[i:]: keyInt's rules for values of 1 to 7 digits.
func keyID(b []byte, i int, key fieldKey) (int32, int, bool) {
	j := i + key.n
	if j+8 > len(b) {
		return 0, i, false
	}
	if key.n >= 8 {
		if word(b, i) != key.lo || word(b, j-8) != key.hi {
			return 0, i, false
		}
	} else if uint64(binary.LittleEndian.Uint32(b[i:])) != key.lo || uint64(binary.LittleEndian.Uint32(b[j-4:])) != key.hi {
		return 0, i, false
	}
	return id(b, j)
}

// fastLine parses the line b[:n] into a row of c when it can (see the file comment)
// and reports whether it did; st gets exactly what worker.line would have added. b
// runs on past the line: at least 8 bytes, the first of them '\n' or '\r'.
func fastLine(b []byte, n int, cpuLimit int32, st *stats, c *cols) bool {
	if n+8 > len(b) || n < 64 {
		return false
	}
	s := 0
	for word(b, s) == 0x2020202020202020 { // the TASK column is right-aligned in 16
		s += 8
	}
	s = skipWS(b, s)
	// room for every fixed-width read up to the body without further length checks
	if s+64 > n {
		return false
	}
	switch b[s] {
	case '#', 'C', 'L': // comments, lost-event lines (a comm starting so goes the general way)
		return false
	case 'v', 'c':
		if s == 0 { // trace-cmd header lines
			return false
		}
	}
	d := lastIn16(b, s, '-')
	if d < 0 {
		return false
	}
	pid, i, ok := id(b, d+1)
	if !ok {
		return false
	}
	i = skipWS(b, i)
	hasTgid, tgid := false, int32(0)
	if b[i] == '(' {
		j := skipWS(b, i+1)
		if b[j] == '-' {
			for j < n && b[j] == '-' {
				j++
			}
		} else {
			if tgid, j, ok = id(b, j); !ok {
				return false
			}
			hasTgid = true
		}
		if b[j] != ')' {
			return false
		}
		i = skipWS(b, j+1)
	}
	if b[i] != '[' {
		return false
	}
	cpu, i, ok := id(b, i+1)
	if !ok || b[i] != ']' || cpu > cpuLimit {
		return false
	}
	i = skipWS(b, i+1)
	if b[i] < '0' || b[i] > '9' {
		// irq-info flags: up to 8 bytes before a space or tab
		m := spaceMask(word(b, i))
		k := i + 8
		if m != 0 {
			k = i + bits.TrailingZeros64(m)>>3
		} else if b[k] != ' ' && b[k] != '\t' {
			return false
		}
		if k >= n {
			return false
		}
		i = skipWS(b, k)
	}
	// timestamp: secs[.frac]:
	secs, j := num(b, i)
	if j == i || j-i > 18 || j >= n {
		return false
	}
	var ts int64
	raw := b[j] != '.'
	if raw {
		ts = secs
	} else {
		f0 := j + 1
		var frac int64
		frac, j = num(b, f0)
		nd := j - f0
		if nd == 0 || nd > 9 || secs > (1<<63-1)/1_000_000_000-1 {
			return false
		}
		ts = secs*1_000_000_000 + frac*pow10[9-nd]
	}
	if j+1 >= n || b[j] != ':' || (b[j+1] != ' ' && b[j+1] != '\t') {
		return false
	}
	j = skipWS(b, j+2)
	// event name: sched_waking: sched_wakeup: sched_wakeup_new: sched_switch: sched_migrate_task:
	if j+24 > n {
		return false
	}
	var k schema.Kind
	var bs int // body start
	switch word(b, j) {
	case wSchedWa:
		switch {
		case word(b, j+5) == wWaking && b[j+13] == ' ':
			k, bs = schema.KindWaking, j+14
		case word(b, j+5) == wWakeup && b[j+13] == ' ':
			k, bs = schema.KindWakeup, j+14
		case word(b, j+8) == wKeupNew && b[j+16] == ':' && b[j+17] == ' ':
			k, bs = schema.KindWakeupNew, j+18
		default:
			return false
		}
	case wSchedSw:
		if word(b, j+5) != wSwitch || b[j+13] != ' ' {
			return false
		}
		k, bs = schema.KindSwitch, j+14
	case wSchedMi:
		if word(b, j+8) != wGrateTa || b[j+16] != 's' || b[j+17] != 'k' || b[j+18] != ':' || b[j+19] != ' ' {
			return false
		}
		k, bs = schema.KindMigrate, j+20
	default:
		return false
	}
	bs = skipWS(b, bs)
	r := c.n
	switch k {
	case schema.KindSwitch:
		// prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s [==>] next_comm=%s next_pid=%d next_prio=%d
		c0 := bs + 10
		if c0+16 > n || word(b, bs) != wPrevComm || b[bs+8] != 'm' || b[bs+9] != '=' {
			return false
		}
		p := lastIn16(b, c0, ' ')
		if p < 0 {
			return false
		}
		ppid, i, ok := keyID(b, p, kPrevPid)
		if !ok {
			return false
		}
		pprio, i, ok := keyID(b, i, kPrevPrio)
		if !ok || i+20 > n || word(b, i) != wPrevStat || string(b[i+8:i+12]) != "ate=" {
			return false
		}
		// the state runs to the next space (up to 8 bytes here)
		s0 := i + 12
		m := eqMask(word(b, s0), ' ')
		if m == 0 {
			return false
		}
		i = s0 + bits.TrailingZeros64(m)>>3
		if i >= n {
			return false
		}
		state := b[s0:i]
		if string(b[i:i+4]) == " ==>" {
			i += 4
		}
		n0 := i + 11
		if n0+16 > n || word(b, i) != wNextComm || string(b[i+8:i+11]) != "mm=" {
			return false
		}
		q := lastIn16(b, n0, ' ')
		if q < 0 {
			return false
		}
		npid, i, ok := keyID(b, q, kNextPid)
		if !ok {
			return false
		}
		nprio, i, ok := keyID(b, i, kNextPrio)
		if !ok || i != n {
			return false
		}
		comm, next := b[c0:p], b[n0:q]
		if !ascii(comm) || !ascii(next) || !ascii(state) {
			return false
		}
		c.pid[r] = ppid
		c.comm.put(r, comm)
		c.prio.put(r, pprio)
		c.prevState.put(r, state)
		c.nextPid.put(r, npid)
		c.nextComm.put(r, next)
		c.nextPrio.put(r, nprio)
	case schema.KindMigrate:
		// comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d
		c0 := bs + 5
		if c0+16 > n || word(b, bs)&0xffffffffff != wComm {
			return false
		}
		p := lastIn16(b, c0, ' ')
		if p < 0 {
			return false
		}
		pid, i, ok := keyID(b, p, kPid)
		if !ok {
			return false
		}
		prio, i, ok := keyID(b, i, kPrio)
		if !ok {
			return false
		}
		o, i, ok := keyID(b, i, kOrigCPU)
		if !ok {
			return false
		}
		dst, i, ok := keyID(b, i, kDestCPU)
		if !ok || i != n || o > cpuLimit || dst > cpuLimit {
			return false
		}
		comm := b[c0:p]
		if !ascii(comm) {
			return false
		}
		c.pid[r] = pid
		c.comm.put(r, comm)
		c.prio.put(r, prio)
		c.orig.put(r, o)
		c.dest.put(r, dst)
		st.cpu(dst)
	default:
		// comm=%s pid=%d prio=%d [success=%d] [target_cpu=%03d]
		c0 := bs + 5
		if c0+16 > n || word(b, bs)&0xffffffffff != wComm {
			return false
		}
		p := lastIn16(b, c0, ' ')
		if p < 0 {
			return false
		}
		pid, i, ok := keyID(b, p, kPid)
		if !ok {
			return false
		}
		prio, i, ok := keyID(b, i, kPrio)
		if !ok {
			return false
		}
		if i != n && i+9 <= n && string(b[i:i+9]) == " success=" {
			_, j, ok := parseInt32(b[:n], i+9)
			if !ok || !atEnd(b[:n], j) {
				return false
			}
			i = j
		}
		hasT := false
		var t int32
		if i != n {
			if t, i, ok = keyID(b, i, kTargetCPU); !ok || i != n || t > cpuLimit {
				return false
			}
			hasT = true
		}
		comm := b[c0:p]
		if !ascii(comm) {
			return false
		}
		c.pid[r] = pid
		c.comm.put(r, comm)
		c.prio.put(r, prio)
		if hasT {
			c.target.put(r, t)
			st.cpu(t)
		}
	}
	c.ts[r] = ts
	c.cpu[r] = cpu
	c.kind[r] = uint8(k)
	c.curPid[r] = pid
	if hasTgid {
		c.tgid.put(r, tgid)
	}
	c.n = r + 1
	st.cpu(cpu)
	st.lastSeenTs, st.hasSeenTs = ts, true
	if raw {
		st.rawTs++
	} else {
		st.fracTs++
	}
	if !st.hasTs {
		st.hasTs, st.firstTs, st.minTs, st.maxTs = true, ts, ts, ts
	} else {
		if ts < st.lastTs {
			st.ooo++
		}
		if ts < st.minTs {
			st.minTs = ts
		}
		if ts > st.maxTs {
			st.maxTs = ts
		}
	}
	st.lastTs = ts
	st.kinds[k]++
	return true
}
