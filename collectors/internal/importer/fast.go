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

// fastMax is the longest line the fast path takes. It works on a window of the chunk
// as an array of 256+8 bytes indexed by uint8 (and up to 7 more for a word): such an
// index is in bounds by its type, so the scans compile without bounds checks. Every
// index it reads is within 16 bytes past the line's end (n <= fastMax), and every
// scan stops at the line's end, where the byte is '\n' or '\r'.
const fastMax = 232

type lineBuf = [256 + 8]byte

// lastIn16 returns the index of the right-most byte in p[a:a+16] equal to the byte
// repeated in pat (bytes1*c), or a-1 when there is none (bits.Len64 of a byte's 0x80
// flag is 8*(byte index+1)).
func lastIn16(p *lineBuf, a int, pat uint64) int {
	y := word(p, a+8) ^ pat
	if h := ^((y&lo7 + lo7) | y | lo7); h != 0 {
		return a + 7 + bits.Len64(h)>>3
	}
	y = word(p, a) ^ pat
	return a - 1 + bits.Len64(^((y&lo7+lo7)|y|lo7))>>3
}

const (
	dashes8 = bytes1 * '-'
	spaces8 = bytes1 * ' '
	tabs8   = bytes1 * '\t'
)

// word reads 8 bytes at p[i:] as a little-endian word (the index, below 256+8, needs
// no check).
func word(p *lineBuf, i int) uint64 {
	x := uint(uint8(i))
	return binary.LittleEndian.Uint64(p[x : x+8])
}

// word4 reads 4 bytes at p[i:] as a little-endian word.
func word4(p *lineBuf, i int) uint64 {
	x := uint(uint8(i))
	return uint64(binary.LittleEndian.Uint32(p[x : x+4]))
}

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
func skipWS(p *lineBuf, i int) int {
	for p[uint8(i)] == ' ' || p[uint8(i)] == '\t' {
		i++
	}
	return i
}

// skipPad is skipWS for padding that often runs several bytes (the TASK and
// TIMESTAMP columns): a word at a time.
func skipPad(p *lineBuf, i int) int {
	for {
		x := word(p, i)
		y, z := x^spaces8, x^tabs8
		if nz := (y&lo7 + lo7 | y) & (z&lo7 + lo7 | z) & hi1; nz != 0 { // 0x80 in each byte that is neither
			return i + bits.TrailingZeros64(nz)>>3
		}
		i += 8
	}
}

// num reads the decimal digits at p[i:]: value and the index after them (v is only
// meaningful for up to 18 digits; callers bound the count).
func num(p *lineBuf, i int) (v int64, j int) {
	for j = i; ; j++ {
		c := p[uint8(j)] - '0'
		if c > 9 {
			return v, j
		}
		v = v*10 + int64(c)
	}
}

// id reads 1 to 7 digits at p[i:] (a pid, a CPU, a tgid); ok is false for anything
// else (no digit, a sign, 8 or more digits), which the general parser then reads.
// Numbers here have 1-7 digits, so a byte loop beats a word-at-a-time conversion.
func id(p *lineBuf, i int) (int32, int, bool) {
	v, j := int32(0), i
	for ; ; j++ {
		c := p[uint8(j)] - '0'
		if c > 9 {
			break
		}
		v = v*10 + int32(c)
	}
	return v, j, j > i && j-i < 8
}

// hasKey8 reports whether p[i:] starts with key, a key of 8 to 16 bytes (keyInt's
// test: first and last words); hasKey4 is the same for keys of 4 to 7 bytes. The
// callers then read the value with id: keyInt's rules for values of 1 to 7 digits. A
// key never matches across the line's end, whose byte is no key's.
func hasKey8(p *lineBuf, i int, key *fieldKey) bool {
	return word(p, i) == key.lo && word(p, i+key.n-8) == key.hi
}

func hasKey4(p *lineBuf, i int, key *fieldKey) bool {
	return word4(p, i) == key.lo && word4(p, i+key.n-4) == key.hi
}

// fastLine parses the line b[:n] into a row of c when it can (see the file comment)
// and reports whether it did; st gets exactly what worker.line would have added. b
// runs on past the line (the rest of the chunk): it declines lines too close to the
// chunk's end for the lineBuf window, and lines not ended by '\n' or '\r'.
func fastLine(b []byte, n int, cpuLimit int32, st *stats, c *cols) bool {
	if n > fastMax || len(b) < len(lineBuf{}) || n < 64 || (b[n] != '\n' && b[n] != '\r') {
		return false
	}
	p := (*lineBuf)(b)
	s := skipPad(p, 0) // the TASK column is right-aligned in 16
	// room for every fixed-width read up to the body without further length checks
	if s+64 > n {
		return false
	}
	switch p[uint8(s)] {
	case '#', 'C', 'L': // comments, lost-event lines (a comm starting so goes the general way)
		return false
	case 'v', 'c':
		if s == 0 { // trace-cmd header lines
			return false
		}
	}
	d := lastIn16(p, s, dashes8)
	if d < s {
		return false
	}
	pid, i, ok := id(p, d+1)
	if !ok {
		return false
	}
	i = skipPad(p, i)
	hasTgid, tgid := false, int32(0)
	if p[uint8(i)] == '(' {
		j := skipWS(p, i+1)
		if p[uint8(j)] == '-' {
			for j < n && p[uint8(j)] == '-' {
				j++
			}
		} else {
			if tgid, j, ok = id(p, j); !ok {
				return false
			}
			hasTgid = true
		}
		if p[uint8(j)] != ')' {
			return false
		}
		i = skipWS(p, j+1)
	}
	if p[uint8(i)] != '[' {
		return false
	}
	cpu, i, ok := id(p, i+1)
	if !ok || p[uint8(i)] != ']' || cpu > cpuLimit {
		return false
	}
	i = skipWS(p, i+1)
	if p[uint8(i)] < '0' || p[uint8(i)] > '9' {
		// irq-info flags: up to 8 bytes before a space or tab
		m := spaceMask(word(p, i))
		k := i + 8
		if m != 0 {
			k = i + bits.TrailingZeros64(m)>>3
		} else if p[uint8(k)] != ' ' && p[uint8(k)] != '\t' {
			return false
		}
		if k >= n {
			return false
		}
		i = skipPad(p, k)
	}
	// timestamp: secs[.frac]:
	secs, j := num(p, i)
	if j == i || j-i > 18 || j >= n {
		return false
	}
	var ts int64
	raw := p[uint8(j)] != '.'
	if raw {
		ts = secs
	} else {
		f0 := j + 1
		var frac int64
		frac, j = num(p, f0)
		nd := j - f0
		if nd == 0 || nd > 9 || secs > (1<<63-1)/1_000_000_000-1 {
			return false
		}
		ts = secs*1_000_000_000 + frac*pow10[9-nd]
	}
	if j+1 >= n || p[uint8(j)] != ':' || (p[uint8(j+1)] != ' ' && p[uint8(j+1)] != '\t') {
		return false
	}
	j = skipWS(p, j+2)
	// event name: sched_waking: sched_wakeup: sched_wakeup_new: sched_switch: sched_migrate_task:
	if j+24 > n {
		return false
	}
	var k schema.Kind
	var bs int // body start
	switch word(p, j) {
	case wSchedWa:
		switch {
		case word(p, j+5) == wWaking && p[uint8(j+13)] == ' ':
			k, bs = schema.KindWaking, j+14
		case word(p, j+5) == wWakeup && p[uint8(j+13)] == ' ':
			k, bs = schema.KindWakeup, j+14
		case word(p, j+8) == wKeupNew && p[uint8(j+16)] == ':' && p[uint8(j+17)] == ' ':
			k, bs = schema.KindWakeupNew, j+18
		default:
			return false
		}
	case wSchedSw:
		if word(p, j+5) != wSwitch || p[uint8(j+13)] != ' ' {
			return false
		}
		k, bs = schema.KindSwitch, j+14
	case wSchedMi:
		if word(p, j+8) != wGrateTa || p[uint8(j+16)] != 's' || p[uint8(j+17)] != 'k' || p[uint8(j+18)] != ':' || p[uint8(j+19)] != ' ' {
			return false
		}
		k, bs = schema.KindMigrate, j+20
	default:
		return false
	}
	bs = skipWS(p, bs)
	r := c.n
	switch k {
	case schema.KindSwitch:
		// prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s [==>] next_comm=%s next_pid=%d next_prio=%d
		c0 := bs + 10
		if c0+16 > n || word(p, bs) != wPrevComm || p[uint8(bs+8)] != 'm' || p[uint8(bs+9)] != '=' {
			return false
		}
		ce := lastIn16(p, c0, spaces8)
		if ce < c0 {
			return false
		}
		if !hasKey8(p, ce, &kPrevPid) {
			return false
		}
		ppid, i, ok := id(p, ce+kPrevPid.n)
		if !ok {
			return false
		}
		if !hasKey8(p, i, &kPrevPrio) {
			return false
		}
		pprio, i, ok := id(p, i+kPrevPrio.n)
		if !ok || i+20 > n || word(p, i) != wPrevStat || string(b[i+8:i+12]) != "ate=" {
			return false
		}
		// the state runs to the next space (up to 8 bytes here)
		s0 := i + 12
		m := eqMask(word(p, s0), ' ')
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
		if n0+16 > n || word(p, i) != wNextComm || string(b[i+8:i+11]) != "mm=" {
			return false
		}
		q := lastIn16(p, n0, spaces8)
		if q < n0 {
			return false
		}
		if !hasKey8(p, q, &kNextPid) {
			return false
		}
		npid, i, ok := id(p, q+kNextPid.n)
		if !ok {
			return false
		}
		if !hasKey8(p, i, &kNextPrio) {
			return false
		}
		nprio, i, ok := id(p, i+kNextPrio.n)
		if !ok || i != n {
			return false
		}
		// 7-bit names need no escaping: tested a window at a time (the 16 bytes from
		// each comm, the 8 from the state, which cover the fields), so a non-ASCII byte
		// just after a field also sends the line the general way
		if (word(p, c0)|word(p, c0+8)|word(p, n0)|word(p, n0+8)|word(p, s0))&hi1 != 0 {
			return false
		}
		c.pid[r] = ppid
		c.comm.putWords(r, p, c0, ce)
		c.prio.put(r, pprio)
		c.prevState.putWords(r, p, s0, s0+len(state))
		c.nextPid.put(r, npid)
		c.nextComm.putWords(r, p, n0, q)
		c.nextPrio.put(r, nprio)
	case schema.KindMigrate:
		// comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d
		c0 := bs + 5
		if c0+16 > n || word(p, bs)&0xffffffffff != wComm {
			return false
		}
		ce := lastIn16(p, c0, spaces8)
		if ce < c0 {
			return false
		}
		if !hasKey4(p, ce, &kPid) {
			return false
		}
		pid, i, ok := id(p, ce+kPid.n)
		if !ok {
			return false
		}
		if !hasKey4(p, i, &kPrio) {
			return false
		}
		prio, i, ok := id(p, i+kPrio.n)
		if !ok {
			return false
		}
		if !hasKey8(p, i, &kOrigCPU) {
			return false
		}
		o, i, ok := id(p, i+kOrigCPU.n)
		if !ok {
			return false
		}
		if !hasKey8(p, i, &kDestCPU) {
			return false
		}
		dst, i, ok := id(p, i+kDestCPU.n)
		if !ok || i != n || o > cpuLimit || dst > cpuLimit {
			return false
		}
		if (word(p, c0)|word(p, c0+8))&hi1 != 0 { // 7-bit, as above
			return false
		}
		c.pid[r] = pid
		c.comm.putWords(r, p, c0, ce)
		c.prio.put(r, prio)
		c.orig.put(r, o)
		c.dest.put(r, dst)
		st.cpu(dst)
	default:
		// comm=%s pid=%d prio=%d [success=%d] [target_cpu=%03d]
		c0 := bs + 5
		if c0+16 > n || word(p, bs)&0xffffffffff != wComm {
			return false
		}
		ce := lastIn16(p, c0, spaces8)
		if ce < c0 {
			return false
		}
		if !hasKey4(p, ce, &kPid) {
			return false
		}
		pid, i, ok := id(p, ce+kPid.n)
		if !ok {
			return false
		}
		if !hasKey4(p, i, &kPrio) {
			return false
		}
		prio, i, ok := id(p, i+kPrio.n)
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
			if !hasKey8(p, i, &kTargetCPU) {
				return false
			}
			if t, i, ok = id(p, i+kTargetCPU.n); !ok || i != n || t > cpuLimit {
				return false
			}
			hasT = true
		}
		if (word(p, c0)|word(p, c0+8))&hi1 != 0 { // 7-bit, as above
			return false
		}
		c.pid[r] = pid
		c.comm.putWords(r, p, c0, ce)
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

// putWords is put(n, p[from:to]) for a field of up to 16 bytes that p holds 16 bytes
// of from from on (the comm windows, a state of up to 8): it is copied as two words
// into the column's spare capacity instead of through append and memmove.
func (c *strn) putWords(n int, p *lineBuf, from, to int) {
	end := len(c.data)
	if end+16 > cap(c.data) {
		c.put(n, p[from:to])
		return
	}
	for c.filled < n {
		c.filled++
		c.off[c.filled] = int32(end)
	}
	d := c.data[end : end+16]
	binary.LittleEndian.PutUint64(d, word(p, from))
	binary.LittleEndian.PutUint64(d[8:], word(p, from+8))
	c.data = c.data[:end+to-from]
	c.off[n+1] = int32(end + to - from)
	c.filled = n + 1
	c.valid[n>>3] |= 1 << (n & 7)
	c.set++
}
