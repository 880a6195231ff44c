package importer

// cols.go owns the columnar row buffer a parse worker fills: plain Go slices per column
// (values, validity bitmaps, string offsets) that become an Arrow record batch without
// copying (see writer.go). Slices are sized for the batch up front and zeroed, so a
// row writes only its non-null fields (most columns are null for most kinds) and the
// hot path allocates nothing once the buffers have grown.

import "placemap/collectors/internal/schema"

// i32n is a nullable int32 column.
type i32n struct {
	v     []int32
	valid []byte
	set   int
}

func (c *i32n) put(n int, v int32) {
	c.v[n] = v
	c.valid[n>>3] |= 1 << (n & 7)
	c.set++
}

func (c *i32n) reset(rows int) {
	c.v = grow32(c.v, rows)
	c.valid = growBytes(c.valid, (rows+7)/8)
	clear(c.v)
	clear(c.valid)
	c.set = 0
}

// strn is a nullable utf8 column: off has rows+1 entries; filled is how many rows have
// their end offset written (null rows get theirs when a later row or finish needs it).
type strn struct {
	off    []int32
	data   []byte
	valid  []byte
	set    int
	filled int
}

func (c *strn) put(n int, s []byte) {
	end := int32(len(c.data))
	for c.filled < n {
		c.filled++
		c.off[c.filled] = end
	}
	c.data = append(c.data, s...)
	c.off[n+1] = int32(len(c.data))
	c.filled = n + 1
	c.valid[n>>3] |= 1 << (n & 7)
	c.set++
}

func (c *strn) finish(n int) {
	end := int32(len(c.data))
	for c.filled < n {
		c.filled++
		c.off[c.filled] = end
	}
}

func (c *strn) reset(rows int) {
	c.off = grow32(c.off, rows+1)
	c.off[0] = 0
	c.valid = growBytes(c.valid, (rows+7)/8)
	clear(c.valid)
	c.data = c.data[:0]
	c.set, c.filled = 0, 0
}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n, n+n/4)
	}
	return s[:n]
}

func growBytes(s []byte, n int) []byte {
	if cap(s) < n {
		return make([]byte, n, n+n/4)
	}
	return s[:n]
}

// cols is one record batch worth of events in schema.ArrowSchema column order.
type cols struct {
	n, rows   int // rows used, rows sized for
	ts        []int64
	cpu       []int32
	kind      []uint8
	curPid    []int32
	tgid      i32n
	pid       []int32
	comm      strn
	prio      i32n
	target    i32n
	orig      i32n
	dest      i32n
	prevState strn
	nextPid   i32n
	nextComm  strn
	nextPrio  i32n
	childPid  i32n
	childComm strn
	filename  strn
	oldPid    i32n
	lost      []int64
	lostValid []byte
	lostSet   int
	// pendingTs lists rows (lost records) whose timestamp was not known in this chunk:
	// the consumer fills them with the previous chunk's last timestamp.
	pendingTs []int
}

func newCols() *cols { return &cols{} }

// reset empties c and sizes it for rows rows.
func (c *cols) reset(rows int) {
	c.n, c.rows = 0, rows
	if cap(c.ts) < rows {
		c.ts = make([]int64, rows, rows+rows/4)
		c.lost = make([]int64, rows, rows+rows/4)
		c.kind = make([]uint8, rows, rows+rows/4)
	}
	c.ts, c.lost, c.kind = c.ts[:rows], c.lost[:rows], c.kind[:rows]
	clear(c.lost)
	c.lostValid = growBytes(c.lostValid, (rows+7)/8)
	clear(c.lostValid)
	c.lostSet = 0
	c.cpu, c.curPid, c.pid = grow32(c.cpu, rows), grow32(c.curPid, rows), grow32(c.pid, rows)
	for _, x := range []*i32n{&c.tgid, &c.prio, &c.target, &c.orig, &c.dest, &c.nextPid, &c.nextPrio, &c.childPid, &c.oldPid} {
		x.reset(rows)
	}
	for _, x := range []*strn{&c.comm, &c.prevState, &c.nextComm, &c.childComm, &c.filename} {
		x.reset(rows)
	}
	c.pendingTs = c.pendingTs[:0]
}

// full reports whether no row is left.
func (c *cols) full() bool { return c.n >= c.rows }

// finish writes the offsets of trailing null strings; call before turning c into arrays.
func (c *cols) finish() {
	for _, x := range []*strn{&c.comm, &c.prevState, &c.nextComm, &c.childComm, &c.filename} {
		x.finish(c.n)
	}
}

// event is one parsed line; byte slices point into the input chunk (or a scratch
// buffer when escaped) and are copied by add.
type event struct {
	ts        int64
	lost      int64
	kind      schema.Kind
	cpu       int32
	curPid    int32
	tgid      int32
	pid       int32
	prio      int32
	a, b      int32 // target_cpu / orig_cpu (a), dest_cpu (b)
	nextPid   int32
	nextPrio  int32
	childPid  int32
	oldPid    int32
	hasTgid   bool
	hasPrio   bool
	hasA      bool
	hasNPrio  bool
	comm      []byte
	prevState []byte
	nextComm  []byte
	childComm []byte
	filename  []byte
}

// add appends e as one row; the caller checks full first.
func (c *cols) add(e *event) {
	n := c.n
	c.ts[n] = e.ts
	c.cpu[n] = e.cpu
	c.kind[n] = uint8(e.kind)
	c.curPid[n] = e.curPid
	if e.hasTgid {
		c.tgid.put(n, e.tgid)
	}
	c.pid[n] = e.pid
	c.comm.put(n, e.comm)
	if e.hasPrio {
		c.prio.put(n, e.prio)
	}
	switch e.kind {
	case schema.KindWakeupNew, schema.KindWaking, schema.KindWakeup:
		if e.hasA {
			c.target.put(n, e.a)
		}
	case schema.KindMigrate:
		c.orig.put(n, e.a)
		c.dest.put(n, e.b)
	case schema.KindSwitch:
		if e.prevState != nil {
			c.prevState.put(n, e.prevState)
		}
		c.nextPid.put(n, e.nextPid)
		c.nextComm.put(n, e.nextComm)
		if e.hasNPrio {
			c.nextPrio.put(n, e.nextPrio)
		}
	case schema.KindFork:
		c.childPid.put(n, e.childPid)
		c.childComm.put(n, e.childComm)
	case schema.KindExec:
		c.filename.put(n, e.filename)
		c.oldPid.put(n, e.oldPid)
	case schema.KindLost:
		if e.lost >= 0 {
			c.lost[n] = e.lost
			c.lostValid[n>>3] |= 1 << (n & 7)
			c.lostSet++
		}
	}
	c.n++
}
