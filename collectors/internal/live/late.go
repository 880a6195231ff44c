package live

// late.go owns the collector's check on its own promptness: how long the oldest event of
// each batch waited before the batch was cut (the ring buffer, the reader's poll, the
// merge and the batch age). Normally that is about the batch age (100 ms). Much more
// means the collector's threads wait for CPU behind the traced workload; it says so once,
// with the remedy, and the run's summary keeps the worst wait.

import "time"

// LateAfter is the wait beyond which the collector warns: the latency it promises a viewer.
const LateAfter = 500 * time.Millisecond

// lateness tracks the worst wait of a run and whether it has warned yet.
type lateness struct {
	MaxNs  int64
	warned bool
}

// seen records a cut batch; it returns true the first time a batch waited beyond LateAfter.
func (l *lateness) seen(b *Batch) bool {
	w := b.CutNs - b.FirstTs
	l.MaxNs = max(l.MaxNs, w)
	if w > int64(LateAfter) && !l.warned {
		l.warned = true
		return true
	}
	return false
}
