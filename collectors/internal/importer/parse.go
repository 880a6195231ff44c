package importer

// parse.go owns turning one chunk of text lines into rows (cols) plus the per-chunk
// statistics the summary is merged from. Workers run it in parallel on successive
// chunks; nothing here depends on other chunks (what does — ordering across chunk
// borders, timestamps of leading lost records — is fixed up by the consumer).

import (
	"bytes"
	"encoding/binary"

	"placemap/collectors/internal/schema"
)

// skip reasons, in summary order.
const (
	rComment = iota
	rBlank
	rHeader
	rOther
	rMalformed
	rCPURange
	rTruncated
	rAnnotation
	nReasons
)

var reasonNames = [nReasons]string{"comment", "blank", "header", "other_event", "malformed", "cpu_out_of_range", "truncated", "annotation"}

const maxFirst = 5

type lineSet struct {
	count int
	first [maxFirst]int
}

func (s *lineSet) add(line int) {
	if s.count < maxFirst {
		s.first[s.count] = line
	}
	s.count++
}

func (s *lineSet) merge(o *lineSet) {
	for i := 0; i < o.count && i < maxFirst; i++ {
		if s.count+i < maxFirst {
			s.first[s.count+i] = o.first[i]
		}
	}
	s.count += o.count
}

const maxCPU = 8191

// stats are one chunk's contribution to the summary.
type stats struct {
	lines       int
	kinds       [10]int
	skips       [nReasons]lineSet
	annotated   lineSet
	cpus        [maxCPU/64 + 1]uint64
	hasTs       bool
	firstTs     int64 // first row timestamp (file order)
	lastTs      int64 // last row timestamp (file order)
	minTs       int64
	maxTs       int64
	lastSeenTs  int64 // last timestamp of any trace line (lost records take it)
	hasSeenTs   bool
	ooo         int
	commEscaped int
	lost        int64
	lostUnknown int
	rawTs       int
	fracTs      int
}

func (s *stats) cpu(c int32) {
	if c >= 0 && c <= maxCPU {
		s.cpus[c>>6] |= 1 << (c & 63)
	}
}

// chunk is a run of whole lines of one file.
type chunk struct {
	seq        int
	buf        []byte
	data       []byte
	lastOfFile bool
	format     Format
	nrCpus     int
	headerLost int64 // entries-written - entries-in-buffer, on a file's first chunk
	file       int
	bytesRead  int64
}

// result is a parsed chunk.
type result struct {
	seq   int
	batch []*cols
	st    stats // line numbers counted from the chunk's first line (1); see shiftLines
	lines int   // how far the chunk moves the numbering (a split line's head does not)
	file  int
	ck    *chunk
}

// shiftLines adds base (the lines of the chunks before) to the chunk-relative line
// numbers a parser recorded.
func (s *stats) shiftLines(base int) {
	for k := range s.skips {
		s.skips[k].shift(base)
	}
	s.annotated.shift(base)
}

func (s *lineSet) shift(base int) {
	for i := 0; i < s.count && i < maxFirst; i++ {
		s.first[i] += base
	}
}

// useFast turns the fast path (fast.go) on; tests turn it off to compare.
var useFast = true

type worker struct {
	scratch []byte
	e       event
	p       prefix
}

func (w *worker) parse(ck *chunk, getCols func(rows int) *cols) *result {
	r := &result{seq: ck.seq, file: ck.file, ck: ck}
	st := &r.st
	left := len(ck.data) + 1 // rows this chunk can still produce, at most (+1: a header lost record)
	newCols := func() *cols {
		c := getCols(min(left, schema.BatchRows))
		r.batch = append(r.batch, c)
		return c
	}
	cur := newCols()
	data := ck.data
	line := 0
	headerLost := ck.headerLost
	cpuLimit := int32(maxCPU)
	if ck.nrCpus > 0 {
		cpuLimit = int32(ck.nrCpus - 1)
	}
	perf := ck.format == FormatPerf
	tracecmd := ck.format == FormatTracecmd
	fast := useFast && !perf
	for len(data) > 0 {
		var l []byte
		rest := data // the line and what follows it in the chunk (fastLine reads ahead)
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			l, data = data, nil
		} else {
			l, data = data[:nl], data[nl+1:]
		}
		line++
		st.lines++
		last := ck.lastOfFile && len(data) == 0
		cut := last && nl < 0 // the file's last line has no newline
		if n := len(l); n > 0 && l[n-1] == '\r' {
			l = l[:n-1]
		}
		if need := 1 + int(min(headerLost, 1)); cur.rows-cur.n < need {
			cur = newCols()
		}
		left--
		if fast && headerLost == 0 && fastLine(rest, len(l), cpuLimit, st, cur) {
			continue
		}
		reason, ann := w.line(l, perf, tracecmd, cpuLimit, st, cur, &headerLost)
		if reason >= 0 {
			if last && (reason == rMalformed || reason == rAnnotation) {
				reason = rTruncated
			}
			if cut && reason == rOther && w.p.name == nil {
				// cut inside the event name (`... 1.000001: sched_swi`)
				reason = rTruncated
			}
			st.skips[reason].add(line)
			continue
		}
		if ann {
			st.annotated.add(line)
		}
	}
	if headerLost > 0 {
		// no event in the chunk: the consumer dates it
		if cur.full() {
			left = 1
			cur = newCols()
		}
		e := &w.e
		*e = event{kind: schema.KindLost, cpu: -1, lost: headerLost, comm: []byte{}}
		cur.pendingTs = append(cur.pendingTs, cur.n)
		cur.add(e)
		st.kinds[schema.KindLost]++
		st.lost += headerLost
	}
	r.lines = st.lines
	if d := ck.data; len(d) > 0 && d[len(d)-1] != '\n' && !ck.lastOfFile {
		r.lines-- // the head of a line longer than a chunk: the next chunk goes on with it
	}
	return r
}

// line handles one line: it returns the skip reason, or -1 when a row was added
// (annotated: with trailing text after the known fields).
func (w *worker) line(l []byte, perf, tracecmd bool, cpuLimit int32, st *stats, c *cols, headerLost *int64) (int, bool) {
	s := skipSpaces(l, 0)
	if s == len(l) {
		return rBlank, false
	}
	if l[s] == '#' {
		return rComment, false
	}
	e := &w.e
	p := &w.p
	if !perf {
		if l[s] == 'C' || l[s] == 'L' {
			if n, cpu, ok := lostLine(l[s:]); ok {
				return w.addLost(st, c, n, cpu, cpuLimit), false
			}
		}
		if s == 0 && isHeaderLine(l) {
			return rHeader, false
		}
	}
	var ok bool
	if perf {
		ok = perfPrefix(l, p)
	} else {
		ok = ftracePrefix(l, p)
		if !ok && tracecmd && s == 0 {
			// trace-cmd prefixes lines of a buffer instance with `name:`
			if k := bytes.IndexByte(l, ' '); k > 1 && l[k-1] == ':' {
				ok = ftracePrefix(l[k:], p)
			}
		}
	}
	if !ok {
		if perf {
			if n, ok := perfLost(l); ok {
				return w.addLost(st, c, n, -1, cpuLimit), false
			}
		}
		return rAnnotation, false
	}
	st.lastSeenTs, st.hasSeenTs = p.ts, true
	if p.rawTs {
		st.rawTs++
	} else {
		st.fracTs++
	}
	name := p.name
	if perf {
		if bytes.HasPrefix(name, []byte("PERF_RECORD_LOST")) || bytes.HasPrefix(p.body, []byte("PERF_RECORD_LOST")) {
			if n, ok := perfLost(l); ok {
				return w.addLost(st, c, n, p.cpu, cpuLimit), false
			}
		}
		name = perfSched(name)
	}
	if name == nil {
		return rOther, false
	}
	k, known := kindOf(name)
	if !known {
		return rOther, false
	}
	// only the fields cols.add reads for kind k matter; the body parser sets the rest
	e.kind, e.ts, e.cpu, e.curPid, e.tgid, e.hasTgid = k, p.ts, p.cpu, p.curPid, p.tgid, p.hasTgid
	e.hasPrio, e.hasA, e.hasNPrio, e.prevState = false, false, false, nil
	ok, ann := parseBody(k, p.body, e)
	if !ok {
		return rMalformed, false
	}
	if k == schema.KindExec {
		e.comm = p.comm
	}
	if p.cpu > cpuLimit || (e.hasA && (e.a > cpuLimit || e.a < 0)) ||
		(k == schema.KindMigrate && (e.b > cpuLimit || e.b < 0 || e.a > cpuLimit || e.a < 0)) {
		return rCPURange, false
	}
	esc := !ascii(e.comm)
	switch k {
	case schema.KindSwitch:
		esc = esc || !ascii(e.nextComm) || !ascii(e.prevState)
	case schema.KindFork:
		esc = esc || !ascii(e.childComm)
	case schema.KindExec:
		esc = esc || !ascii(e.filename)
	}
	if esc {
		w.escape(k, st)
	}
	if *headerLost > 0 {
		// entries overwritten before the oldest kept one: dated with it
		l := event{kind: schema.KindLost, cpu: -1, ts: p.ts, lost: *headerLost, comm: []byte{}}
		w.row(st, c, &l)
		st.lost += *headerLost
		*headerLost = 0
	}
	w.row(st, c, e)
	st.cpu(e.cpu)
	if e.hasA {
		st.cpu(e.a)
	}
	if k == schema.KindMigrate {
		st.cpu(e.b)
	}
	return -1, ann
}

// ascii reports whether s is 7-bit (the common case: nothing to escape).
func ascii(s []byte) bool {
	// top bits of eight bytes at a time
	var acc uint64
	for len(s) >= 8 {
		acc |= binary.LittleEndian.Uint64(s)
		s = s[8:]
	}
	for _, c := range s {
		acc |= uint64(c)
	}
	return acc&0x8080808080808080 == 0
}

// escape rewrites the text fields of w.e that are not UTF-8 (see escapeInto).
func (w *worker) escape(k schema.Kind, st *stats) {
	e := &w.e
	w.scratch = w.scratch[:0]
	var esc bool
	if e.comm, w.scratch, esc = escapeInto(w.scratch, e.comm); esc {
		st.commEscaped++
	}
	switch k {
	case schema.KindSwitch:
		if e.nextComm, w.scratch, esc = escapeInto(w.scratch, e.nextComm); esc {
			st.commEscaped++
		}
		e.prevState, w.scratch, _ = escapeInto(w.scratch, e.prevState)
	case schema.KindFork:
		if e.childComm, w.scratch, esc = escapeInto(w.scratch, e.childComm); esc {
			st.commEscaped++
		}
	case schema.KindExec:
		e.filename, w.scratch, _ = escapeInto(w.scratch, e.filename)
	}
}

// row appends e and updates the order statistics.
func (w *worker) row(st *stats, c *cols, e *event) {
	if !st.hasTs {
		st.hasTs, st.firstTs, st.minTs, st.maxTs = true, e.ts, e.ts, e.ts
	} else {
		if e.ts < st.lastTs {
			st.ooo++
		}
		if e.ts < st.minTs {
			st.minTs = e.ts
		}
		if e.ts > st.maxTs {
			st.maxTs = e.ts
		}
	}
	st.lastTs = e.ts
	st.kinds[e.kind]++
	c.add(e)
}

// addLost adds a lost record dated with the last trace line seen (or, at the start of
// a chunk, by the consumer).
func (w *worker) addLost(st *stats, c *cols, n int64, cpu int32, cpuLimit int32) int {
	if cpu > cpuLimit {
		return rCPURange
	}
	e := &w.e
	*e = event{kind: schema.KindLost, cpu: cpu, lost: n, comm: []byte{}}
	if n < 0 {
		st.lostUnknown++
	} else {
		st.lost += n
	}
	st.cpu(cpu)
	if st.hasSeenTs {
		e.ts = st.lastSeenTs
		w.row(st, c, e)
		return -1
	}
	c.pendingTs = append(c.pendingTs, c.n)
	st.kinds[schema.KindLost]++
	c.add(e)
	return -1
}

// lostLine recognises ftrace's `CPU:N [LOST N EVENTS]`, trace-cmd's
// `CPU:N [N EVENTS DROPPED]` / `CPU:N [EVENTS DROPPED]` and a bare `LOST N EVENTS`.
// n is -1 when the count is unknown.
func lostLine(l []byte) (n int64, cpu int32, ok bool) {
	cpu = -1
	i := 0
	if j, ok := lit(l, 0, "CPU:"); ok {
		c, k, ok := parseUint(l, j)
		if !ok || c > 1<<30 {
			return 0, 0, false
		}
		cpu = int32(c)
		if i, ok = lit(l, k, " ["); !ok {
			return 0, 0, false
		}
		if j, ok := lit(l, i, "EVENTS DROPPED]"); ok && !trailing(l, j) {
			return -1, cpu, true
		}
		if v, k, ok := parseUint(l, i); ok {
			if j, ok := lit(l, k, " EVENTS DROPPED]"); ok && !trailing(l, j) {
				return v, cpu, true
			}
		}
	}
	j, ok := lit(l, i, "LOST ")
	if !ok {
		return 0, 0, false
	}
	v, k, ok := parseUint(l, j)
	if !ok {
		return 0, 0, false
	}
	k, ok = lit(l, k, " EVENTS")
	if !ok {
		return 0, 0, false
	}
	if cpu >= 0 {
		if k, ok = lit(l, k, "]"); !ok {
			return 0, 0, false
		}
	}
	if trailing(l, k) {
		return 0, 0, false
	}
	return v, cpu, true
}

// perfLost recognises perf's PERF_RECORD_LOST / PERF_RECORD_LOST_SAMPLES records
// (`perf script --show-lost-events`): the count follows `lost `.
func perfLost(l []byte) (int64, bool) {
	i := bytes.Index(l, []byte("PERF_RECORD_LOST"))
	if i < 0 {
		return 0, false
	}
	j := bytes.Index(l[i:], []byte("lost "))
	if j < 0 {
		return -1, true
	}
	v, _, ok := parseUint(l, i+j+5)
	if !ok {
		return -1, true
	}
	return v, true
}
