package live

// batch.go owns cutting the merged stream into numbered Arrow IPC batches (the event
// schema, via the shared tracefs.ArrowSink), with what each batch holds counted for the
// run's summary.

import (
	"bytes"

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
	buf     *bytes.Buffer
	sink    *tracefs.ArrowSink
	rows    int
	started int64 // the first (oldest) row's timestamp: a batch is cut by how long its events have waited
	next    int
	ByKind  [10]int64
	ByCPU   map[int32]int64 // traced events (kinds 0..7) per recording CPU
	Rows    int64
	lost    map[int32]int64 // the open batch's Batch.Lost
	traced  int64
}

// NewBatcher numbers batches from 0; opts are extra IPC writer options (compression).
func NewBatcher(maxRows int, opts ...ipc.Option) *Batcher {
	return &Batcher{MaxRows: maxRows, opts: opts, ByCPU: map[int32]int64{}}
}

// Add appends one event; it returns a finished batch when the batch is full.
func (b *Batcher) Add(ev *tracefs.Event) (*Batch, error) {
	if b.sink == nil {
		b.buf = &bytes.Buffer{}
		b.sink = tracefs.NewArrowSink(b.buf, b.opts...)
		b.started = ev.TsNs
	}
	if err := b.sink.Add(ev); err != nil {
		return nil, err
	}
	b.rows++
	b.Rows++
	b.ByKind[ev.Kind]++
	if ev.Kind <= schema.KindExec {
		b.ByCPU[ev.CPU]++
	}
	if b.lost == nil {
		b.lost = map[int32]int64{}
	}
	switch {
	case ev.Kind <= schema.KindExec:
		b.lost[ev.CPU]++
		b.traced++
	case ev.Kind == schema.KindLost && ev.LostEvents > 0:
		b.lost[ev.CPU] += ev.LostEvents
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
	if b.sink == nil {
		return 0
	}
	return MonoNow() - b.started
}

// Flush ends the open batch (nil when it holds no rows).
func (b *Batcher) Flush() (*Batch, error) {
	if b.sink == nil {
		return nil, nil
	}
	s := b.sink
	b.sink = nil
	if err := s.Close(); err != nil {
		return nil, err
	}
	out := &Batch{Seq: b.next, Rows: b.rows, Data: b.buf.Bytes(), Lost: b.lost, Traced: b.traced,
		FirstTs: b.started, CutNs: MonoNow()}
	b.lost, b.traced = nil, 0
	b.next++
	b.rows = 0
	b.buf = nil
	return out, nil
}
