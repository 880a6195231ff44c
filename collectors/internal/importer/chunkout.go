package importer

// chunkout.go owns the chunk output (`import --out - --chunks`): the rows cut into
// exactly schema.BatchRows-row chunks, each encoded the way the backend stores it
// before compression (string columns dictionary-encoded where values repeat, one Arrow
// IPC stream with one record batch) by a pool of goroutines, and written in order as
// frames:
//
//	header (16 bytes, little endian): magic "PMCK", rows u32, ipc_bytes u64
//	ipc:    ipc_bytes of Arrow IPC stream
//
// The backend reads the table from those bytes without copying and zstd-compresses the
// same bytes as the stored chunk, so the dictionary encoding and IPC writing run here,
// in parallel, instead of in Python under its GIL. (Compression stays in the backend:
// pure-Go zstd was 3-4x slower than libzstd on these chunks.) The dictionary rule
// matches backend/placemap/store/codec.py
// (dictionary_encode): a string column is encoded when its distinct values times two
// are fewer than the rows; values in order of first appearance; the narrowest signed
// index type (int8 up to 127 values, int16 up to 32,767, else int32); nulls stay nulls.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"placemap/collectors/internal/schema"
)

// ChunkMagic opens every chunk frame header.
const ChunkMagic = "PMCK"

// ChunkHeaderBytes is the size of a frame header.
const ChunkHeaderBytes = 16

type chunkJob struct {
	c     *cols
	frame *bytes.Buffer
	err   error
	done  chan struct{}
}

type chunkOut struct {
	bw    *bufio.Writer
	cur   *cols
	jobs  chan *chunkJob // to the encoders
	order chan *chunkJob // to the emitter, in chunk order
	pool  *freeList[*cols]
	bufs  *freeList[*bytes.Buffer] // frames
	wg    sync.WaitGroup           // encoders
	emit  chan struct{}            // closed when the emitter has returned
	mu    sync.Mutex
	err   error
	shut  bool
}

func newChunkOut(w io.Writer, workers int) *chunkOut {
	o := &chunkOut{
		bw:    bufio.NewWriterSize(w, 1<<20),
		jobs:  make(chan *chunkJob, workers),
		order: make(chan *chunkJob, workers+2),
		emit:  make(chan struct{}),
	}
	o.pool = newFreeList(newCols, 2*workers+4)
	o.bufs = newFreeList(func() *bytes.Buffer { return new(bytes.Buffer) }, 2*workers+4)
	for i := 0; i < workers; i++ {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			e := newChunkEncoder()
			for j := range o.jobs {
				j.frame = o.bufs.get()
				j.err = e.encode(j.c, j.frame)
				close(j.done)
			}
		}()
	}
	go o.emitter()
	return o
}

func (o *chunkOut) emitter() {
	defer close(o.emit)
	for j := range o.order {
		<-j.done
		err := j.err
		if err == nil && o.failed() == nil {
			_, err = o.bw.Write(j.frame.Bytes())
		}
		o.pool.put(j.c)
		o.bufs.put(j.frame)
		if err != nil {
			o.fail(err)
		}
	}
}

func (o *chunkOut) fail(err error) {
	o.mu.Lock()
	if o.err == nil {
		o.err = err
	}
	o.mu.Unlock()
}

func (o *chunkOut) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

func (o *chunkOut) submit() {
	j := &chunkJob{c: o.cur, done: make(chan struct{})}
	o.cur = nil
	o.order <- j
	o.jobs <- j
}

// write copies c's rows into the current chunk, submitting each full one.
func (o *chunkOut) write(c *cols) error {
	if err := o.failed(); err != nil {
		return err
	}
	c.finish()
	for from := 0; from < c.n; {
		if o.cur == nil {
			o.cur = o.pool.get()
			o.cur.reset(schema.BatchRows)
		}
		k := min(c.n-from, o.cur.rows-o.cur.n)
		o.cur.appendFrom(c, from, k)
		from += k
		if o.cur.full() {
			o.submit()
		}
	}
	return nil
}

func (o *chunkOut) stop() {
	if !o.shut {
		o.shut = true
		close(o.jobs)
		close(o.order)
		o.wg.Wait()
		<-o.emit
	}
}

// close submits the last partial chunk, waits for every frame and flushes.
func (o *chunkOut) close() error {
	if o.cur != nil && o.cur.n > 0 && o.failed() == nil {
		o.submit()
	}
	o.stop()
	if err := o.failed(); err != nil {
		return err
	}
	return o.bw.Flush()
}

// abort stops the encoders without writing more (after an error elsewhere).
func (o *chunkOut) abort() {
	o.fail(errors.New("aborted"))
	o.stop()
}

// freeList keeps up to cap(free) items for reuse. Unlike a sync.Pool it survives GCs:
// the importer's buffers are megabytes each, and a fresh one costs its pages in faults.
type freeList[T any] struct {
	free  chan T
	fresh func() T
}

func newFreeList[T any](fresh func() T, n int) *freeList[T] {
	return &freeList[T]{free: make(chan T, n), fresh: fresh}
}

func (f *freeList[T]) get() T {
	select {
	case x := <-f.free:
		return x
	default:
		return f.fresh()
	}
}

func (f *freeList[T]) put(x T) {
	select {
	case f.free <- x:
	default: // full: left to the GC
	}
}

// appendFrom appends rows [from, from+k) of s (finished) to c; c has room for them.
func (c *cols) appendFrom(s *cols, from, k int) {
	n, to := c.n, from+k
	copy(c.ts[n:], s.ts[from:to])
	copy(c.cpu[n:], s.cpu[from:to])
	copy(c.kind[n:], s.kind[from:to])
	copy(c.curPid[n:], s.curPid[from:to])
	copy(c.pid[n:], s.pid[from:to])
	// A column with no value in s is skipped: c's rows are zero and null from reset
	// (and a string column's offsets are written by the next put or finish).
	if s.lostSet > 0 {
		copy(c.lost[n:], s.lost[from:to])
		c.lostSet += copyBits(c.lostValid, n, s.lostValid, from, k)
	}
	dst := []*i32n{&c.tgid, &c.prio, &c.target, &c.orig, &c.dest, &c.nextPid, &c.nextPrio, &c.childPid, &c.oldPid}
	src := []*i32n{&s.tgid, &s.prio, &s.target, &s.orig, &s.dest, &s.nextPid, &s.nextPrio, &s.childPid, &s.oldPid}
	for i, d := range dst {
		if src[i].set == 0 {
			continue
		}
		copy(d.v[n:], src[i].v[from:to])
		d.set += copyBits(d.valid, n, src[i].valid, from, k)
	}
	sdst := []*strn{&c.comm, &c.prevState, &c.nextComm, &c.childComm, &c.filename}
	ssrc := []*strn{&s.comm, &s.prevState, &s.nextComm, &s.childComm, &s.filename}
	for i, d := range sdst {
		x := ssrc[i]
		if x.set == 0 {
			continue
		}
		d.finish(n)
		base := int32(len(d.data)) - x.off[from]
		d.data = append(d.data, x.data[x.off[from]:x.off[to]]...)
		do, xo := d.off[n+1:n+k+1], x.off[from+1:to+1] // equal lengths: no bounds checks in the loop
		for r := range do {
			do[r] = xo[r] + base
		}
		d.filled = n + k
		d.set += copyBits(d.valid, n, x.valid, from, k)
	}
	c.n += k
}

// copyBits ORs bits [sOff, sOff+k) of src into dst at dOff (dst's are clear) and
// returns how many were set; whole destination bytes at a time where it can.
func copyBits(dst []byte, dOff int, src []byte, sOff, k int) int {
	set := 0
	i := 0
	bit := func(i int) {
		s := sOff + i
		if src[s>>3]&(1<<(s&7)) != 0 {
			d := dOff + i
			dst[d>>3] |= 1 << (d & 7)
			set++
		}
	}
	for ; i < k && (dOff+i)&7 != 0; i++ {
		bit(i)
	}
	for ; i+64 <= k; i += 64 {
		// 64 bits at a time; the source bits run into a ninth byte only when shifted,
		// and that byte then still holds bits of the range
		s := sOff + i
		sh := uint(s & 7)
		v := binary.LittleEndian.Uint64(src[s>>3:])
		if sh != 0 {
			v = v>>sh | uint64(src[s>>3+8])<<(64-sh)
		}
		d := (dOff + i) >> 3
		binary.LittleEndian.PutUint64(dst[d:], binary.LittleEndian.Uint64(dst[d:])|v)
		set += bits.OnesCount64(v)
	}
	for ; i+8 <= k; i += 8 {
		s := sOff + i
		sh := uint(s & 7)
		v := src[s>>3] >> sh
		if sh != 0 {
			v |= src[s>>3+1] << (8 - sh) // bits s+1..s+7 run into the next byte, inside src
		}
		dst[(dOff+i)>>3] |= v
		set += bits.OnesCount8(v)
	}
	for ; i < k; i++ {
		bit(i)
	}
	return set
}

// chunkEncoder turns one chunk into a frame; one per encoding goroutine.
type chunkEncoder struct {
	rec     recorder
	seen    map[string]int32
	idx     []int32
	scratch [schema.ColLostEvents + 1]dictScratch // per column, reused chunk after chunk
}

// dictScratch backs one column's dictionary arrays while a chunk is encoded.
type dictScratch struct {
	off  []int32
	data []byte
	i8   []int8
	i16  []int16
	i32  []int32
}

func newChunkEncoder() *chunkEncoder {
	return &chunkEncoder{seen: map[string]int32{}}
}

// encode writes c's frame (header and IPC stream) to frame, which it resets.
func (e *chunkEncoder) encode(c *cols, frame *bytes.Buffer) error {
	rec := e.rec.record(c)
	defer rec.Release()
	n := c.n
	fields := append([]arrow.Field(nil), schema.ArrowSchema.Fields()...)
	arrs := append([]arrow.Array(nil), rec.Columns()...)
	strs := map[int]*strn{schema.ColComm: &c.comm, schema.ColPrevState: &c.prevState, schema.ColNextComm: &c.nextComm,
		schema.ColChildComm: &c.childComm, schema.ColFilename: &c.filename}
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for col, s := range strs {
		if d := e.dictionary(s, n, &e.scratch[col]); d != nil {
			made = append(made, d)
			fields[col] = arrow.Field{Name: fields[col].Name, Type: d.DataType(), Nullable: fields[col].Nullable}
			arrs[col] = d
		}
	}
	sc := arrow.NewSchema(fields, nil)
	out := array.NewRecordBatch(sc, arrs, int64(n))
	defer out.Release()
	frame.Reset()
	var head [ChunkHeaderBytes]byte
	frame.Write(head[:])
	w := ipc.NewWriter(frame, ipc.WithSchema(sc))
	if err := w.Write(out); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	b := frame.Bytes()
	copy(b, ChunkMagic)
	binary.LittleEndian.PutUint32(b[4:], uint32(n))
	binary.LittleEndian.PutUint64(b[8:], uint64(len(b)-ChunkHeaderBytes))
	return nil
}

// dictionary returns s as a dictionary array when it pays (see the file comment), else
// nil. The array's buffers are sc's: valid until sc is used again.
func (e *chunkEncoder) dictionary(s *strn, n int, sc *dictScratch) arrow.Array {
	if n == 0 {
		return nil
	}
	clear(e.seen)
	e.idx = grow32(e.idx, n)
	dOff := append(sc.off[:0], 0)
	dData := sc.data[:0]
	defer func() { sc.off, sc.data = dOff, dData }()
	var last []byte
	lastIdx := int32(-1)
	idx := e.idx[:n]
	for i := 0; i < n; i++ {
		if i&63 == 0 && i+64 <= n && binary.LittleEndian.Uint64(s.valid[i>>3:]) == 0 {
			// 64 null rows (most rows of child_comm, filename; many of next_comm)
			clear(idx[i : i+64])
			i += 63
			continue
		}
		if s.valid[i>>3]&(1<<(i&7)) == 0 {
			idx[i] = 0
			continue
		}
		v := s.data[s.off[i]:s.off[i+1]]
		if k := len(v); lastIdx >= 0 && k == len(last) {
			// task names of 8-16 bytes compared as two words here (sameShort is not
			// inlined), the rest by sameShort
			if k >= 8 && k <= 16 {
				if binary.LittleEndian.Uint64(v) == binary.LittleEndian.Uint64(last) &&
					binary.LittleEndian.Uint64(v[k-8:]) == binary.LittleEndian.Uint64(last[k-8:]) {
					idx[i] = lastIdx
					continue
				}
			} else if sameShort(v, last) {
				idx[i] = lastIdx
				continue
			}
		}
		j, ok := e.seen[string(v)]
		if !ok {
			j = int32(len(dOff) - 1)
			if (int(j)+1)*2 >= n { // one more value breaks distinct*2 < n
				return nil
			}
			e.seen[string(v)] = j
			dData = append(dData, v...)
			dOff = append(dOff, int32(len(dData)))
		}
		idx[i] = j
		last, lastIdx = v, j
	}
	distinct := len(dOff) - 1
	if distinct*2 >= n {
		return nil
	}
	nulls := n - s.set
	var valid *memory.Buffer
	if nulls > 0 {
		valid = memory.NewBufferBytes(s.valid[:(n+7)/8])
	}
	var it arrow.DataType
	var ib *memory.Buffer
	switch {
	case distinct <= 127:
		sc.i8 = growN(sc.i8, n)
		i8 := sc.i8[:n]
		for i, x := range e.idx[:len(i8)] {
			i8[i] = int8(x)
		}
		it, ib = arrow.PrimitiveTypes.Int8, memory.NewBufferBytes(arrow.Int8Traits.CastToBytes(sc.i8))
	case distinct <= 32_767:
		sc.i16 = growN(sc.i16, n)
		i16 := sc.i16[:n]
		for i, x := range e.idx[:len(i16)] {
			i16[i] = int16(x)
		}
		it, ib = arrow.PrimitiveTypes.Int16, memory.NewBufferBytes(arrow.Int16Traits.CastToBytes(sc.i16))
	default:
		sc.i32 = append(sc.i32[:0], e.idx[:n]...)
		it, ib = arrow.PrimitiveTypes.Int32, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(sc.i32))
	}
	dd := array.NewData(arrow.BinaryTypes.String, distinct, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(dOff)), memory.NewBufferBytes(dData)}, nil, 0, 0)
	dict := array.MakeFromData(dd)
	dd.Release()
	defer dict.Release()
	id := array.NewData(it, n, []*memory.Buffer{valid, ib}, nil, nulls, 0)
	defer id.Release()
	indices := array.MakeFromData(id)
	defer indices.Release()
	return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: it, ValueType: arrow.BinaryTypes.String}, indices, dict)
}

// sameShort reports whether a and b are equal: strings of up to 16 bytes (task names)
// as two word compares each, without a call into memequal.
func sameShort(a, b []byte) bool {
	n := len(a)
	if n != len(b) {
		return false
	}
	switch {
	case n >= 8 && n <= 16:
		return binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b) &&
			binary.LittleEndian.Uint64(a[n-8:]) == binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4 && n < 8:
		return binary.LittleEndian.Uint32(a) == binary.LittleEndian.Uint32(b) &&
			binary.LittleEndian.Uint32(a[n-4:]) == binary.LittleEndian.Uint32(b[n-4:])
	}
	return bytes.Equal(a, b)
}

func growN[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// NewChunkConverter returns a writer that takes an Arrow IPC stream in the event
// schema (rows in time order, e.g. from the trace.dat decoder) and writes it to w as
// chunk frames; Close flushes the last chunk and reports any error. llc_util rows
// (llc, util) are not carried by cols and are refused.
func NewChunkConverter(w io.Writer) io.WriteCloser {
	pr, pw := io.Pipe()
	cv := &chunkConverter{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(cv.done)
		cv.err = convertStream(pr, w)
		pr.CloseWithError(cv.err) // unblocks a writer when the stream was refused
	}()
	return cv
}

type chunkConverter struct {
	pw   *io.PipeWriter
	done chan struct{}
	err  error
}

func (cv *chunkConverter) Write(p []byte) (int, error) { return cv.pw.Write(p) }

func (cv *chunkConverter) Close() error {
	cv.pw.Close()
	<-cv.done
	return cv.err
}

func convertStream(r io.Reader, w io.Writer) error {
	rd, err := ipc.NewReader(r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil // nothing was written (the decoder failed first)
		}
		return err
	}
	defer rd.Release()
	o := newChunkOut(w, max(1, runtime.GOMAXPROCS(0)))
	defer o.abort()
	c := newCols()
	c.reset(schema.BatchRows)
	var e event
	for rd.Next() {
		rec := rd.RecordBatch()
		if rec.Column(schema.ColLlc).NullN() != int(rec.NumRows()) {
			return errors.New("chunk output does not carry llc_util rows")
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			rowOf(rec, i, &e)
			c.add(&e)
			if c.full() {
				if err := o.write(c); err != nil {
					return err
				}
				c.reset(schema.BatchRows)
			}
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	if err := o.write(c); err != nil {
		return err
	}
	return o.close()
}
