package live

// timing.go owns the per-batch timestamps a benchmark asks for (--timing-out): when each
// batch was cut and when it was first written to the backend, beside its oldest event's
// timestamp, all on CLOCK_MONOTONIC (the instance's trace clock), so the bench can split
// event-to-viewer latency into its stages. Off (nil) unless asked for.

import (
	"encoding/json"
	"os"
	"sync"
)

// BatchTime is one batch's line in the timing file.
type BatchTime struct {
	Seq     int   `json:"seq"`
	Rows    int   `json:"rows"`
	FirstTs int64 `json:"first_ts"` // the batch's first (oldest) event
	CutNs   int64 `json:"cut_ns"`   // the batch was closed
	SentNs  int64 `json:"sent_ns"`  // its frame was first written to the backend (0: never)
}

// Timing collects BatchTimes; a nil *Timing records nothing.
type Timing struct {
	mu    sync.Mutex
	bySeq map[int]*BatchTime
	order []int
}

// NewTiming starts an empty record.
func NewTiming() *Timing { return &Timing{bySeq: map[int]*BatchTime{}} }

// Cut notes a closed batch.
func (t *Timing) Cut(b *Batch) {
	if t == nil || b == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bySeq[b.Seq] = &BatchTime{Seq: b.Seq, Rows: b.Rows, FirstTs: b.FirstTs, CutNs: b.CutNs}
	t.order = append(t.order, b.Seq)
}

// Sent notes a batch's frame written to the backend (the first time only).
func (t *Timing) Sent(seq int) {
	if t == nil {
		return
	}
	now := MonoNow()
	t.mu.Lock()
	defer t.mu.Unlock()
	if bt := t.bySeq[seq]; bt != nil && bt.SentNs == 0 {
		bt.SentNs = now
	}
}

// Write stores one JSON line per batch, in cut order.
func (t *Timing) Write(path string) error {
	if t == nil || path == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, s := range t.order {
		if err := enc.Encode(t.bySeq[s]); err != nil {
			_ = f.Close()
			return err
		}
	}
	return f.Close()
}
