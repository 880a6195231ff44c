package live

// batch.go owns cutting the merged stream into numbered Arrow IPC batches (the event
// schema; columns and IPC writer in cols.go), with what each batch holds counted for the
// run's summary.

import (
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracefs"
)

// Batch is one numbered Arrow IPC stream holding one record batch.
type Batch struct {
	Seq  int
	Rows int
	Data []byte
	// Lost is what dropping this batch would lose, by recording CPU: its traced events
	// plus the counts of its lost records (the outbox reports them as lost if it must
	// drop the batch).
	Lost   map[int32]int64
	Traced int64 // rows of traced events (kinds 0..7)
	// FirstTs is the first (oldest) event's timestamp and CutNs when the batch was closed
	// (CLOCK_MONOTONIC), for --timing-out.
	FirstTs, CutNs int64
}

// Batcher accumulates events into batches.
type Batcher struct {
	MaxRows int
	opts    []ipc.Option
	cols    *cols // the open batch (cols.n rows); made at the first row
	sw      *streamWriter
	rows    int
	started int64 // the first (oldest) row's timestamp: a batch is cut by how long its events have waited
	next    int
	ByKind  [10]int64
	ByCPU   map[int32]int64 // traced events (kinds 0..7) per recording CPU, of the batches cut so far
	Rows    int64
	// The open batch's counts by recording CPU (a slice index per row, not a map update): its traced
	// events and the counts of its lost records; at the cut they become Batch.Lost and go into ByCPU.
	tracedBy, lostBy []int64
	traced           int64
}

// count adds n to c[cpu], growing c (CPUs are small non-negative numbers).
func count(c []int64, cpu int32, n int64) []int64 {
	if int(cpu) >= len(c) {
		c = append(c, make([]int64, int(cpu)+1-len(c))...)
	}
	c[cpu] += n
	return c
}

// NewBatcher numbers batches from 0; opts are extra IPC writer options (compression).
func NewBatcher(maxRows int, opts ...ipc.Option) *Batcher {
	return &Batcher{MaxRows: maxRows, opts: opts, ByCPU: map[int32]int64{}}
}

// Add appends one event; it returns a finished batch when the batch is full.
func (b *Batcher) Add(ev *tracefs.Event) (*Batch, error) {
	if b.cols == nil {
		b.cols = newCols(max(b.MaxRows, 1))
		b.sw = newStreamWriter(b.opts...)
	}
	if b.rows == 0 {
		b.started = ev.TsNs
	}
	b.cols.add(ev)
	b.rows++
	b.Rows++
	b.ByKind[ev.Kind]++
	switch {
	case ev.CPU < 0:
		// Only host records (llc_util) have no CPU; they count as nothing.
	case ev.Kind <= schema.KindExec:
		b.tracedBy = count(b.tracedBy, ev.CPU, 1)
		b.traced++
	case ev.Kind == schema.KindLost && ev.LostEvents > 0:
		b.lostBy = count(b.lostBy, ev.CPU, ev.LostEvents)
	}
	if b.rows >= b.MaxRows {
		return b.Flush()
	}
	return nil, nil
}

// Age is how long the open batch's oldest event has waited since it was recorded (0
// when none is open): the batch is cut on event age, not on how long the batch has been
// open, so time an event spent in the kernel buffer or the merge counts.
func (b *Batcher) Age() int64 {
	if b.rows == 0 {
		return 0
	}
	return MonoNow() - b.started
}

// Flush ends the open batch (nil when it holds no rows).
func (b *Batcher) Flush() (*Batch, error) {
	if b.rows == 0 {
		return nil, nil
	}
	rec := b.cols.record()
	data, err := b.sw.encode(rec)
	rec.Release()
	b.cols.reset()
	if err != nil {
		return nil, err
	}
	lost := map[int32]int64{}
	for cpu, n := range b.tracedBy {
		if n > 0 {
			lost[int32(cpu)] += n
			b.ByCPU[int32(cpu)] += n
		}
	}
	for cpu, n := range b.lostBy {
		if n > 0 {
			lost[int32(cpu)] += n
		}
	}
	clear(b.tracedBy)
	clear(b.lostBy)
	out := &Batch{Seq: b.next, Rows: b.rows, Data: data, Lost: lost, Traced: b.traced,
		FirstTs: b.started, CutNs: MonoNow()}
	b.traced = 0
	b.next++
	b.rows = 0
	return out, nil
}
