package live

import "testing"

// A batch whose oldest event waited beyond LateAfter warns once; the worst wait is kept.
func TestLatenessWarnsOnceAndKeepsTheWorstWait(t *testing.T) {
	var l lateness
	ms := int64(1_000_000)
	if l.seen(&Batch{FirstTs: 0, CutNs: 120 * ms}) {
		t.Fatal("a batch cut at its 100 ms age is not late")
	}
	if !l.seen(&Batch{FirstTs: 1000 * ms, CutNs: 1700 * ms}) {
		t.Fatal("a batch whose oldest event waited 700 ms is late")
	}
	if l.seen(&Batch{FirstTs: 2000 * ms, CutNs: 2900 * ms}) {
		t.Fatal("the warning is given once per run")
	}
	if l.MaxNs != 900*ms {
		t.Fatalf("worst wait %d ns, want %d", l.MaxNs, 900*ms)
	}
}
