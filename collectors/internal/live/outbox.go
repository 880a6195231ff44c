package live

// outbox.go owns the batches the backend has not acknowledged yet: in memory up to a
// byte limit, beyond it appended to a spill file (the backend is away or slow), so the
// collector keeps draining the kernel's buffers whatever the network does. A batch
// leaves the outbox when the backend acknowledges (committed) or rejects it. The spill
// file is capped: a batch that would grow it past the cap is dropped, counted, and what
// it held is handed back (TakeDropped) to be sent as lost records once there is room.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

type entry struct {
	seq, rows int
	data      []byte // nil when spilled
	off, n    int64  // position in the spill file
}

// Outbox is safe for concurrent use.
type Outbox struct {
	mu       sync.Mutex
	entries  []entry // ascending seq
	memBytes int64
	memLimit int64
	dir      string
	spill    *os.File
	spillEnd int64
	spillCap int64 // bytes; 0: no cap
	dropped  map[int32]int64
	notify   chan struct{}
	timing   *Timing // nil unless --timing-out

	Spilled int // batches that went to the spill file
	// Batches dropped because the spill file was at its cap, their rows, and the
	// traced events they held (reported as lost records; the kernel losses their lost
	// records carried are reported again too, but counted by the kernel already).
	Dropped, DroppedRows int
	DroppedEvents        int64
	Rejected             int // batches the backend refused
	RejRows              int
	Reasons              []string
}

// NewOutbox keeps up to memLimit bytes in memory and spills the rest under dir, into
// a file of at most spillCap bytes (0: no cap).
func NewOutbox(memLimit int64, dir string, spillCap int64) *Outbox {
	return &Outbox{memLimit: memLimit, dir: dir, spillCap: spillCap, dropped: map[int32]int64{}, notify: make(chan struct{}, 1)}
}

// TakeDropped returns, by recording CPU, the events of dropped batches not yet taken
// (to be sent as lost records), and forgets them.
func (o *Outbox) TakeDropped() map[int32]int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.dropped) == 0 {
		return nil
	}
	d := o.dropped
	o.dropped = map[int32]int64{}
	return d
}

// SpillBytes is the spill file's current size.
func (o *Outbox) SpillBytes() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.spillEnd
}

// Notify is signalled when a batch is added.
func (o *Outbox) Notify() <-chan struct{} { return o.notify }

// Add queues a batch (in seq order).
func (o *Outbox) Add(b *Batch) error { return o.add(b, true) }

// AddPastCap queues a batch that must not be dropped whatever the spill cap: the run's
// last one, carrying the lost records of the batches dropped before (a few rows).
func (o *Outbox) AddPastCap(b *Batch) error { return o.add(b, false) }

func (o *Outbox) add(b *Batch, capped bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := entry{seq: b.Seq, rows: b.Rows, data: b.Data}
	if o.memBytes+int64(len(b.Data)) > o.memLimit {
		if capped && o.spillCap > 0 && o.spillEnd+int64(len(b.Data)) > o.spillCap {
			o.Dropped++
			o.DroppedRows += b.Rows
			o.DroppedEvents += b.Traced
			for cpu, n := range b.Lost {
				o.dropped[cpu] += n
			}
			return nil
		}
		if o.spill == nil {
			f, err := os.CreateTemp(o.dir, "placemap-spill-*.arrows")
			if err != nil {
				return fmt.Errorf("live: spill file: %w", err)
			}
			o.spill = f
		}
		if _, err := o.spill.WriteAt(b.Data, o.spillEnd); err != nil {
			return fmt.Errorf("live: spill file: %w", err)
		}
		e.data, e.off, e.n = nil, o.spillEnd, int64(len(b.Data))
		o.spillEnd += e.n
		o.Spilled++
	} else {
		o.memBytes += int64(len(b.Data))
	}
	o.entries = append(o.entries, e)
	o.timing.Cut(b)
	select {
	case o.notify <- struct{}{}:
	default:
	}
	return nil
}

// After returns the first queued batch with seq > after (its data read back from the
// spill file when needed), or nil.
func (o *Outbox) After(after int) (*Batch, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i := sort.Search(len(o.entries), func(i int) bool { return o.entries[i].seq > after })
	if i == len(o.entries) {
		return nil, nil
	}
	e := o.entries[i]
	data := e.data
	if data == nil {
		data = make([]byte, e.n)
		if _, err := o.spill.ReadAt(data, e.off); err != nil {
			return nil, fmt.Errorf("live: reading spill file: %w", err)
		}
	}
	return &Batch{Seq: e.seq, Rows: e.rows, Data: data}, nil
}

// AckThrough drops every batch with seq <= seq (a welcome's last_seq).
func (o *Outbox) AckThrough(seq int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i := sort.Search(len(o.entries), func(i int) bool { return o.entries[i].seq > seq })
	for _, e := range o.entries[:i] {
		o.memBytes -= int64(len(e.data))
	}
	o.entries = append(o.entries[:0], o.entries[i:]...)
	o.trim()
}

// Remove drops one batch (acknowledged, or rejected with reason when reason != "").
func (o *Outbox) Remove(seq int, reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i := sort.Search(len(o.entries), func(i int) bool { return o.entries[i].seq >= seq })
	if i == len(o.entries) || o.entries[i].seq != seq {
		return
	}
	e := o.entries[i]
	o.memBytes -= int64(len(e.data))
	if reason != "" {
		o.Rejected++
		o.RejRows += e.rows
		if len(o.Reasons) < 20 {
			o.Reasons = append(o.Reasons, fmt.Sprintf("batch %d: %s", seq, reason))
		}
	}
	o.entries = append(o.entries[:i], o.entries[i+1:]...)
	o.trim()
}

// trim empties the spill file once nothing in it is pending.
func (o *Outbox) trim() {
	if o.spill == nil {
		return
	}
	for _, e := range o.entries {
		if e.data == nil {
			return
		}
	}
	_ = o.spill.Truncate(0)
	o.spillEnd = 0
}

// Len is the number of batches not yet acknowledged.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.entries)
}

// Close removes the spill file.
func (o *Outbox) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.spill != nil {
		name := o.spill.Name()
		_ = o.spill.Close()
		_ = os.Remove(name)
		o.spill = nil
	}
}

// SpillPath is the spill file's path ("" when none was needed).
func (o *Outbox) SpillPath() string {
	if o.spill == nil {
		return ""
	}
	return filepath.Clean(o.spill.Name())
}
