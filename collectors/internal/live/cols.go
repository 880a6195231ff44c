package live

// cols.go owns the open batch's columns: plain Go slices sized once for a full batch and
// reused from batch to batch, filled a row at a time, wrapped (without copying) as the
// Arrow arrays of schema.ArrowSchema when the batch is cut, and written by one IPC
// writer kept for the whole run.
//
// Why not arrow's RecordBuilder (tracefs.ArrowSink, which the importers still use): a
// builder per batch re-grew every column from empty and a new ipc.Writer per batch made
// a new zstd encoder (its match tables, about a megabyte) and a 1 MB bufio buffer each
// time; at hackbench rates that garbage and its collection cost more CPU per event than
// decoding the pages.

import (
	"bytes"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracefs"
)

// i32col is a nullable int32 column: values (0 where null) and a validity bitmap.
type i32col struct {
	v     []int32
	valid []byte
	set   int
}

func (c *i32col) init(rows int) {
	c.v = make([]int32, rows)
	c.valid = make([]byte, (rows+7)/8)
}

func (c *i32col) put(n int, ok bool, v int32) {
	if ok {
		c.v[n] = v
		c.valid[n>>3] |= 1 << (n & 7)
		c.set++
	} else {
		c.v[n] = 0
	}
}

func (c *i32col) reset(n int) {
	clear(c.valid[:(n+7)/8])
	c.set = 0
}

// strcol is a string column (nullable or not): offsets, bytes, validity.
type strcol struct {
	off   []int32
	data  []byte
	valid []byte
	set   int
}

func (c *strcol) init(rows int) {
	c.off = make([]int32, rows+1)
	c.valid = make([]byte, (rows+7)/8)
}

func (c *strcol) put(n int, ok bool, s string) {
	if ok {
		c.data = append(c.data, s...)
		c.valid[n>>3] |= 1 << (n & 7)
		c.set++
	}
	c.off[n+1] = int32(len(c.data))
}

func (c *strcol) reset(n int) {
	clear(c.valid[:(n+7)/8])
	c.data = c.data[:0]
	c.set = 0
}

// cols is one batch's rows.
type cols struct {
	rows                               int // capacity
	n                                  int
	ts                                 []int64
	cpu, curPid, pid                   []int32
	kind                               []uint8
	prio, target, orig, dest           i32col
	nextPid, nextPrio, childPid, oldPd i32col
	llc                                i32col
	util                               []float32
	utilValid                          []byte
	utilSet                            int
	lost                               []int64
	lostValid                          []byte
	lostSet                            int
	comm, prevState, nextComm          strcol
	childComm, filename                strcol
	zero                               []byte // backs the all-null tgid column
}

func newCols(rows int) *cols {
	c := &cols{rows: rows}
	c.ts = make([]int64, rows)
	c.cpu, c.curPid, c.pid = make([]int32, rows), make([]int32, rows), make([]int32, rows)
	c.kind = make([]uint8, rows)
	for _, x := range c.i32s() {
		x.init(rows)
	}
	c.util, c.utilValid = make([]float32, rows), make([]byte, (rows+7)/8)
	c.lost, c.lostValid = make([]int64, rows), make([]byte, (rows+7)/8)
	for _, s := range c.strs() {
		s.init(rows)
	}
	c.zero = make([]byte, rows*4)
	return c
}

func (c *cols) i32s() []*i32col {
	return []*i32col{&c.prio, &c.target, &c.orig, &c.dest, &c.nextPid, &c.nextPrio, &c.childPid, &c.oldPd, &c.llc}
}

func (c *cols) strs() []*strcol {
	return []*strcol{&c.comm, &c.prevState, &c.nextComm, &c.childComm, &c.filename}
}

func (c *cols) reset() {
	n := c.n
	for _, x := range c.i32s() {
		x.reset(n)
	}
	for _, s := range c.strs() {
		s.reset(n)
	}
	clear(c.utilValid[:(n+7)/8])
	clear(c.lostValid[:(n+7)/8])
	c.utilSet, c.lostSet, c.n = 0, 0, 0
}

// add appends one row; the caller cuts the batch before c.n reaches c.rows. Which nullable
// columns are set follows the kind, as tracefs.ArrowSink.Add has it.
func (c *cols) add(ev *tracefs.Event) {
	n := c.n
	k := ev.Kind
	c.ts[n], c.cpu[n], c.kind[n], c.curPid[n], c.pid[n] = ev.TsNs, ev.CPU, uint8(k), ev.CurPid, ev.Pid
	c.comm.put(n, true, ev.Comm)
	c.prio.put(n, ev.HasPrio, ev.Prio)
	c.target.put(n, ev.HasTarget, ev.TargetCPU)
	mig := k == schema.KindMigrate
	c.orig.put(n, mig, ev.OrigCPU)
	c.dest.put(n, mig, ev.DestCPU)
	sw := k == schema.KindSwitch
	c.prevState.put(n, sw, ev.PrevState)
	c.nextPid.put(n, sw, ev.NextPid)
	c.nextComm.put(n, sw, ev.NextComm)
	c.nextPrio.put(n, sw, ev.NextPrio)
	fork := k == schema.KindFork
	c.childPid.put(n, fork, ev.ChildPid)
	c.childComm.put(n, fork, ev.ChildComm)
	exec := k == schema.KindExec
	c.filename.put(n, exec, ev.Filename)
	c.oldPd.put(n, exec, ev.OldPid)
	util := k == schema.KindLlcUtil
	c.llc.put(n, util, ev.LLC)
	if util {
		c.util[n] = ev.Util
		c.utilValid[n>>3] |= 1 << (n & 7)
		c.utilSet++
	} else {
		c.util[n] = 0
	}
	if k == schema.KindLost && ev.LostEvents >= 0 {
		c.lost[n] = ev.LostEvents
		c.lostValid[n>>3] |= 1 << (n & 7)
		c.lostSet++
	} else {
		// A page flagged "missed events" without a stored count: the count is unknown.
		c.lost[n] = 0
	}
	c.n = n + 1
}

func bitmap(valid []byte, n, set int) *memory.Buffer {
	if set == n {
		return nil // no nulls: arrow needs no bitmap
	}
	return memory.NewBufferBytes(valid[:(n+7)/8])
}

func mk(t arrow.DataType, n, nulls int, bufs ...*memory.Buffer) arrow.Array {
	d := array.NewData(t, n, bufs, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func i32Arr(v []int32, n int) arrow.Array {
	return mk(arrow.PrimitiveTypes.Int32, n, 0, nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(v[:n])))
}

func (x *i32col) arr(n int) arrow.Array {
	return mk(arrow.PrimitiveTypes.Int32, n, n-x.set, bitmap(x.valid, n, x.set), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(x.v[:n])))
}

func (s *strcol) arr(n int) arrow.Array {
	return mk(arrow.BinaryTypes.String, n, n-s.set, bitmap(s.valid, n, s.set),
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(s.off[:n+1])), memory.NewBufferBytes(s.data))
}

// record wraps the rows (no copy) as a record batch in schema.ArrowSchema; it is only
// valid until the columns are reset.
func (c *cols) record() arrow.RecordBatch {
	n := c.n
	a := make([]arrow.Array, len(schema.ArrowSchema.Fields()))
	a[schema.ColTsNs] = mk(arrow.PrimitiveTypes.Int64, n, 0, nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(c.ts[:n])))
	a[schema.ColCpu] = i32Arr(c.cpu, n)
	a[schema.ColKind] = mk(arrow.PrimitiveTypes.Uint8, n, 0, nil, memory.NewBufferBytes(c.kind[:n]))
	a[schema.ColCurPid] = i32Arr(c.curPid, n)
	a[schema.ColTgid] = mk(arrow.PrimitiveTypes.Int32, n, n, memory.NewBufferBytes(c.zero[:(n+7)/8]), memory.NewBufferBytes(c.zero[:n*4]))
	a[schema.ColPid] = i32Arr(c.pid, n)
	a[schema.ColComm] = c.comm.arr(n)
	a[schema.ColPrio] = c.prio.arr(n)
	a[schema.ColTargetCpu] = c.target.arr(n)
	a[schema.ColOrigCpu] = c.orig.arr(n)
	a[schema.ColDestCpu] = c.dest.arr(n)
	a[schema.ColPrevState] = c.prevState.arr(n)
	a[schema.ColNextPid] = c.nextPid.arr(n)
	a[schema.ColNextComm] = c.nextComm.arr(n)
	a[schema.ColNextPrio] = c.nextPrio.arr(n)
	a[schema.ColChildPid] = c.childPid.arr(n)
	a[schema.ColChildComm] = c.childComm.arr(n)
	a[schema.ColFilename] = c.filename.arr(n)
	a[schema.ColOldPid] = c.oldPd.arr(n)
	a[schema.ColLlc] = c.llc.arr(n)
	a[schema.ColUtil] = mk(arrow.PrimitiveTypes.Float32, n, n-c.utilSet, bitmap(c.utilValid, n, c.utilSet), memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(c.util[:n])))
	a[schema.ColLostEvents] = mk(arrow.PrimitiveTypes.Int64, n, n-c.lostSet, bitmap(c.lostValid, n, c.lostSet), memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(c.lost[:n])))
	rec := array.NewRecordBatch(schema.ArrowSchema, a, int64(n))
	for _, x := range a {
		x.Release()
	}
	return rec
}

// eos ends an Arrow IPC stream.
var eos = []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}

// streamWriter makes each batch a whole Arrow IPC stream (schema, one record batch, end
// of stream), as the backend reads each frame, with one ipc.Writer for the run: the
// writer's compressor (and its tables) is made once, and the schema message it writes
// once is kept and put at the head of every stream.
type streamWriter struct {
	w      *ipc.Writer
	schema []byte        // the schema message, as the writer wrote it
	out    *bytes.Buffer // where the current record batch message goes
}

func newStreamWriter(opts ...ipc.Option) *streamWriter {
	s := &streamWriter{out: &bytes.Buffer{}}
	s.w = ipc.NewWriterWithPayloadWriter(s, append([]ipc.Option{ipc.WithSchema(schema.ArrowSchema)}, opts...)...)
	return s
}

// Start, WritePayload and Close make streamWriter the ipc.PayloadWriter of its writer.
func (s *streamWriter) Start() error { return nil }

func (s *streamWriter) WritePayload(p ipc.Payload) error {
	if s.schema == nil { // the writer's first message is its schema
		var b bytes.Buffer
		if _, err := p.WritePayload(&b); err != nil {
			return err
		}
		s.schema = b.Bytes()
		return nil
	}
	_, err := p.WritePayload(s.out)
	return err
}

func (s *streamWriter) Close() error { return nil }

// encode returns rec as a whole IPC stream in a new slice of its exact size (it is kept
// until the backend acknowledges it).
func (s *streamWriter) encode(rec arrow.RecordBatch) ([]byte, error) {
	s.out.Reset()
	if err := s.w.Write(rec); err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(s.schema)+s.out.Len()+len(eos))
	b = append(b, s.schema...)
	b = append(b, s.out.Bytes()...)
	return append(b, eos...), nil
}
