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

// One P per 16 CPUs, at least one.
func TestProcsIsOnePerSixteenCPUsAndAtLeastOne(t *testing.T) {
	for _, c := range [][2]int{{1, 1}, {2, 1}, {16, 1}, {31, 1}, {32, 2}, {384, 24}} {
		if got := Procs(c[0]); got != c[1] {
			t.Errorf("Procs(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}
