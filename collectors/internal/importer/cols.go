package importer

// cols.go owns the columnar row buffer a parse worker fills for one chunk of input:
// plain Go slices per column (values, validity bitmaps, string offsets) that become an
// Arrow record batch without copying (see writer.go). Reused across chunks, so the hot
// path allocates nothing once the slices have grown.

import "placemap/collectors/internal/schema"

// i32n is a nullable int32 column.
type i32n struct {
	v     []int32
	valid []byte
	nulls int
}

func (c *i32n) add(n int, v int32) {
	if n&7 == 0 {
		c.valid = append(c.valid, 0)
	}
	c.valid[n>>3] |= 1 << (n & 7)
	c.v = append(c.v, v)
}

func (c *i32n) null(n int) {
	if n&7 == 0 {
		c.valid = append(c.valid, 0)
	}
	c.v = append(c.v, 0)
	c.nulls++
}

func (c *i32n) reset() { c.v, c.valid, c.nulls = c.v[:0], c.valid[:0], 0 }

// i64n is a nullable int64 column.
type i64n struct {
	v     []int64
	valid []byte
	nulls int
}

func (c *i64n) add(n int, v int64) {
	if n&7 == 0 {
		c.valid = append(c.valid, 0)
	}
	c.valid[n>>3] |= 1 << (n & 7)
	c.v = append(c.v, v)
}

func (c *i64n) null(n int) {
	if n&7 == 0 {
		c.valid = append(c.valid, 0)
	}
	c.v = append(c.v, 0)
	c.nulls++
}

func (c *i64n) reset() { c.v, c.valid, c.nulls = c.v[:0], c.valid[:0], 0 }

// strn is a (nullable) utf8 column: offsets has n+1 entries.
type strn struct {
	off   []int32
	data  []byte
	valid []byte
	nulls int
}

func (c *strn) add(n int, s []byte) {
	if n&7 == 0 {
		c.valid = append(c.valid, 0)
	}
	c.valid[n>>3] |= 1 << (n & 7)
	c.data = append(c.data, s...)
	c.off = append(c.off, int32(len(c.data)))
}

func (c *strn) null(n int) {
	if n&7 == 0 {
		c.valid = append(c.valid, 0)
	}
	c.off = append(c.off, int32(len(c.data)))
	c.nulls++
}

func (c *strn) reset() {
	c.off = append(c.off[:0], 0)
	c.data, c.valid, c.nulls = c.data[:0], c.valid[:0], 0
}

// cols is one record batch worth of events in schema.ArrowSchema column order.
type cols struct {
	n         int
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
	lost      i64n
	// pendingTs lists rows (lost records) whose timestamp was not known in this chunk:
	// the consumer fills them with the previous chunk's last timestamp.
	pendingTs []int
}

func newCols() *cols {
	c := &cols{}
	c.reset()
	return c
}

func (c *cols) reset() {
	c.n = 0
	c.ts, c.cpu, c.kind, c.curPid, c.pid = c.ts[:0], c.cpu[:0], c.kind[:0], c.curPid[:0], c.pid[:0]
	c.tgid.reset()
	c.comm.reset()
	c.prio.reset()
	c.target.reset()
	c.orig.reset()
	c.dest.reset()
	c.prevState.reset()
	c.nextPid.reset()
	c.nextComm.reset()
	c.nextPrio.reset()
	c.childPid.reset()
	c.childComm.reset()
	c.filename.reset()
	c.oldPid.reset()
	c.lost.reset()
	c.pendingTs = c.pendingTs[:0]
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

// add appends e as one row.
func (c *cols) add(e *event) {
	n := c.n
	c.ts = append(c.ts, e.ts)
	c.cpu = append(c.cpu, e.cpu)
	c.kind = append(c.kind, uint8(e.kind))
	c.curPid = append(c.curPid, e.curPid)
	if e.hasTgid {
		c.tgid.add(n, e.tgid)
	} else {
		c.tgid.null(n)
	}
	c.pid = append(c.pid, e.pid)
	c.comm.add(n, e.comm)
	if e.hasPrio {
		c.prio.add(n, e.prio)
	} else {
		c.prio.null(n)
	}
	switch e.kind {
	case schema.KindWakeupNew, schema.KindWaking, schema.KindWakeup:
		if e.hasA {
			c.target.add(n, e.a)
		} else {
			c.target.null(n)
		}
		c.orig.null(n)
		c.dest.null(n)
	case schema.KindMigrate:
		c.target.null(n)
		c.orig.add(n, e.a)
		c.dest.add(n, e.b)
	default:
		c.target.null(n)
		c.orig.null(n)
		c.dest.null(n)
	}
	if e.kind == schema.KindSwitch {
		if e.prevState != nil {
			c.prevState.add(n, e.prevState)
		} else {
			c.prevState.null(n)
		}
		c.nextPid.add(n, e.nextPid)
		c.nextComm.add(n, e.nextComm)
		if e.hasNPrio {
			c.nextPrio.add(n, e.nextPrio)
		} else {
			c.nextPrio.null(n)
		}
	} else {
		c.prevState.null(n)
		c.nextPid.null(n)
		c.nextComm.null(n)
		c.nextPrio.null(n)
	}
	if e.kind == schema.KindFork {
		c.childPid.add(n, e.childPid)
		c.childComm.add(n, e.childComm)
	} else {
		c.childPid.null(n)
		c.childComm.null(n)
	}
	if e.kind == schema.KindExec {
		c.filename.add(n, e.filename)
		c.oldPid.add(n, e.oldPid)
	} else {
		c.filename.null(n)
		c.oldPid.null(n)
	}
	if e.kind == schema.KindLost {
		if e.lost >= 0 {
			c.lost.add(n, e.lost)
		} else {
			c.lost.null(n)
		}
	} else {
		c.lost.null(n)
	}
	c.n++
}
