package live

import (
	"strings"
	"testing"
)

// A priority outside SCHED_FIFO's range is refused before any thread is touched.
func TestSetRealtimeRejectsPrioritiesOutsideFIFORange(t *testing.T) {
	for _, p := range []int{0, -1, 100} {
		err := SetRealtime(p)
		if err == nil || !strings.Contains(err.Error(), "outside 1..99") {
			t.Errorf("SetRealtime(%d) = %v, want an out-of-range error", p, err)
		}
	}
}
