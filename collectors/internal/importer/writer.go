package importer

// writer.go owns the output: cols -> Arrow record batches (zero-copy wrapping of the
// Go slices) written as an Arrow IPC stream without buffer compression, and the stable
// re-sort of a finished output when the input was out of timestamp order.

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"placemap/collectors/internal/schema"
)

// batchSink takes the output's rows in order, batch by batch: outWriter (an Arrow IPC
// stream) or chunkOut (the store's compressed chunks, chunkout.go).
type batchSink interface {
	write(c *cols) error // c may be reused once it returns
	close() error
	abort() // stop without finishing the output (after an error elsewhere)
}

// recorder wraps cols as record batches; zero backs the all-null columns.
type recorder struct {
	zero []byte
}

type outWriter struct {
	recorder
	bw *bufio.Writer
	w  *ipc.Writer
}

func newOutWriter(w io.Writer) *outWriter {
	bw := bufio.NewWriterSize(w, 64<<10) // small: big column buffers bypass the copy
	return &outWriter{bw: bw, w: ipc.NewWriter(bw, ipc.WithSchema(schema.ArrowSchema))}
}

func validity(v []byte, nulls int) *memory.Buffer {
	if nulls == 0 {
		return nil
	}
	return memory.NewBufferBytes(v)
}

func i32Arr(v []int32, valid []byte, nulls int) arrow.Array {
	if nulls > 0 {
		valid = valid[:(len(v)+7)/8]
	}
	d := array.NewData(arrow.PrimitiveTypes.Int32, len(v), []*memory.Buffer{validity(valid, nulls), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(v))}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func i32nArr(c *i32n, n int) arrow.Array { return i32Arr(c.v[:n], c.valid, n-c.set) }

func strArr(c *strn, n int) arrow.Array {
	nulls := n - c.set
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{validity(c.valid[:(n+7)/8], nulls), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c.off[:n+1])), memory.NewBufferBytes(c.data)}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func (o *recorder) nullArr(t arrow.DataType, width, n int) arrow.Array {
	need := n*width + (n+7)/8
	if len(o.zero) < need {
		o.zero = make([]byte, need+need/4)
	}
	d := array.NewData(t, n, []*memory.Buffer{memory.NewBufferBytes(o.zero[:(n+7)/8]), memory.NewBufferBytes(o.zero[:n*width])}, nil, n, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// record wraps c (without copying) as a record batch in schema.ArrowSchema.
func (o *recorder) record(c *cols) arrow.RecordBatch {
	c.finish()
	n := c.n
	arrs := make([]arrow.Array, len(schema.ArrowSchema.Fields()))
	d := array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(c.ts[:n]))}, nil, 0, 0)
	arrs[schema.ColTsNs] = array.MakeFromData(d)
	d.Release()
	arrs[schema.ColCpu] = i32Arr(c.cpu[:n], nil, 0)
	d = array.NewData(arrow.PrimitiveTypes.Uint8, n, []*memory.Buffer{nil, memory.NewBufferBytes(c.kind[:n])}, nil, 0, 0)
	arrs[schema.ColKind] = array.MakeFromData(d)
	d.Release()
	arrs[schema.ColCurPid] = i32Arr(c.curPid[:n], nil, 0)
	arrs[schema.ColTgid] = i32nArr(&c.tgid, n)
	arrs[schema.ColPid] = i32Arr(c.pid[:n], nil, 0)
	arrs[schema.ColComm] = strArr(&c.comm, n)
	arrs[schema.ColPrio] = i32nArr(&c.prio, n)
	arrs[schema.ColTargetCpu] = i32nArr(&c.target, n)
	arrs[schema.ColOrigCpu] = i32nArr(&c.orig, n)
	arrs[schema.ColDestCpu] = i32nArr(&c.dest, n)
	arrs[schema.ColPrevState] = strArr(&c.prevState, n)
	arrs[schema.ColNextPid] = i32nArr(&c.nextPid, n)
	arrs[schema.ColNextComm] = strArr(&c.nextComm, n)
	arrs[schema.ColNextPrio] = i32nArr(&c.nextPrio, n)
	arrs[schema.ColChildPid] = i32nArr(&c.childPid, n)
	arrs[schema.ColChildComm] = strArr(&c.childComm, n)
	arrs[schema.ColFilename] = strArr(&c.filename, n)
	arrs[schema.ColOldPid] = i32nArr(&c.oldPid, n)
	arrs[schema.ColLlc] = o.nullArr(arrow.PrimitiveTypes.Int32, 4, n)
	arrs[schema.ColUtil] = o.nullArr(arrow.PrimitiveTypes.Float32, 4, n)
	lostNulls := n - c.lostSet
	d = array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{validity(c.lostValid[:(n+7)/8], lostNulls), memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(c.lost[:n]))}, nil, lostNulls, 0)
	arrs[schema.ColLostEvents] = array.MakeFromData(d)
	d.Release()
	rec := array.NewRecordBatch(schema.ArrowSchema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// write writes c as one record batch; c may be reused once it returns.
func (o *outWriter) write(c *cols) error {
	if c.n == 0 {
		return nil
	}
	rec := o.record(c)
	defer rec.Release()
	return o.w.Write(rec)
}

func (o *outWriter) abort() {}

func (o *outWriter) close() error {
	if err := o.w.Close(); err != nil {
		return err
	}
	return o.bw.Flush()
}

// resort rewrites the IPC stream in src (a finished output) into dst with its rows in
// stable ts order. It holds the whole output in memory: only out-of-order inputs pay.
func resort(src *os.File, dst io.Writer) error {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	rd, err := ipc.NewReader(bufio.NewReaderSize(src, 1<<20))
	if err != nil {
		return err
	}
	defer rd.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for rd.Next() {
		r := rd.RecordBatch()
		r.Retain()
		recs = append(recs, r)
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("re-reading output to sort it: %w", err)
	}
	o := newOutWriter(dst)
	if err := writeSorted(recs, o); err != nil {
		return err
	}
	return o.close()
}

// writeSorted writes the rows of recs to o in stable ts order.
func writeSorted(recs []arrow.RecordBatch, o batchSink) error {
	type ref struct {
		ts  int64
		rec int32
		row int32
	}
	var refs []ref
	for ri, r := range recs {
		for i, t := range r.Column(schema.ColTsNs).(*array.Int64).Int64Values() {
			refs = append(refs, ref{t, int32(ri), int32(i)})
		}
	}
	slices.SortStableFunc(refs, func(a, b ref) int { return cmp.Compare(a.ts, b.ts) })
	c := newCols()
	c.reset(schema.BatchRows)
	var e event
	for _, rf := range refs {
		rowOf(recs[rf.rec], int(rf.row), &e)
		c.add(&e)
		if c.full() {
			if err := o.write(c); err != nil {
				return err
			}
			c.reset(schema.BatchRows)
		}
	}
	return o.write(c)
}

// rowOf reads row i of r back into e (the inverse of cols.add).
func rowOf(r arrow.RecordBatch, i int, e *event) {
	i32 := func(col int) (int32, bool) {
		a := r.Column(col).(*array.Int32)
		return a.Value(i), a.IsValid(i)
	}
	str := func(col int) []byte {
		a := r.Column(col).(*array.String)
		if a.IsNull(i) {
			return nil
		}
		return []byte(a.Value(i))
	}
	*e = event{}
	e.ts = r.Column(schema.ColTsNs).(*array.Int64).Value(i)
	e.kind = schema.Kind(r.Column(schema.ColKind).(*array.Uint8).Value(i))
	e.cpu, _ = i32(schema.ColCpu)
	e.curPid, _ = i32(schema.ColCurPid)
	e.tgid, e.hasTgid = i32(schema.ColTgid)
	e.pid, _ = i32(schema.ColPid)
	e.comm = str(schema.ColComm)
	e.prio, e.hasPrio = i32(schema.ColPrio)
	if e.kind == schema.KindMigrate {
		e.a, e.hasA = i32(schema.ColOrigCpu)
		e.b, _ = i32(schema.ColDestCpu)
	} else {
		e.a, e.hasA = i32(schema.ColTargetCpu)
	}
	e.prevState = str(schema.ColPrevState)
	e.nextPid, _ = i32(schema.ColNextPid)
	e.nextComm = str(schema.ColNextComm)
	e.nextPrio, e.hasNPrio = i32(schema.ColNextPrio)
	e.childPid, _ = i32(schema.ColChildPid)
	e.childComm = str(schema.ColChildComm)
	e.filename = str(schema.ColFilename)
	e.oldPid, _ = i32(schema.ColOldPid)
	lost := r.Column(schema.ColLostEvents).(*array.Int64)
	e.lost = -1
	if lost.IsValid(i) {
		e.lost = lost.Value(i)
	}
}
