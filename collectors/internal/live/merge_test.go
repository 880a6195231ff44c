package live

import (
	"math/rand"
	"sort"
	"testing"

	"placemap/collectors/internal/tracefs"
)

func evs(cpu int32, ts ...int64) []tracefs.Event {
	out := make([]tracefs.Event, len(ts))
	for i, t := range ts {
		out[i] = tracefs.Event{TsNs: t, CPU: cpu}
	}
	return out
}

func drainM(t *testing.T, m *Merger) []tracefs.Event {
	t.Helper()
	var got []tracefs.Event
	if err := m.Emit(func(ev *tracefs.Event) error { got = append(got, *ev); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

// An event is emitted only once every source has vouched for its time: a source that has
// said nothing holds the merge back, an idle source's watermark releases it.
func TestMergeWaitsForWatermarks(t *testing.T) {
	m := NewMerger(2)
	m.Push(0, evs(0, 10, 20, 30), 0, nil)
	if got := drainM(t, m); len(got) != 0 {
		t.Fatalf("emitted %d events before source 1 said anything", len(got))
	}
	m.Push(1, nil, 25, nil) // source 1: nothing before 25 from now on
	got := drainM(t, m)
	if len(got) != 2 || got[0].TsNs != 10 || got[1].TsNs != 20 {
		t.Fatalf("got %+v, want ts 10, 20", got)
	}
	m.Push(1, evs(1, 25, 40), 0, nil)
	got = drainM(t, m)
	if len(got) != 1 || got[0].TsNs != 25 {
		t.Fatalf("got %+v, want 25 (source 0 may still send more at 30)", got)
	}
	m.Push(0, nil, Done, nil)
	m.Push(1, nil, Done, nil)
	got = drainM(t, m)
	if len(got) != 2 || got[0].TsNs != 30 || got[1].TsNs != 40 || m.Pending() != 0 || m.OutOfOrder != 0 {
		t.Fatalf("got %+v, pending %d, out of order %d", got, m.Pending(), m.OutOfOrder)
	}
}

// Random interleavings of pushes and emits give the same stream as one stable sort by
// (ts, source), with every chunk handed back once emitted.
func TestMergeStreamingEqualsSort(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 50; round++ {
		nsrc := 1 + rng.Intn(5)
		m := NewMerger(nsrc)
		type pend struct {
			src int
			ev  []tracefs.Event
		}
		var all []tracefs.Event
		last := make([]int64, nsrc)
		var got []tracefs.Event
		returned, pushed := 0, 0
		for step := 0; step < 200; step++ {
			s := rng.Intn(nsrc)
			var chunk []tracefs.Event
			for k := rng.Intn(4); k > 0; k-- {
				last[s] += int64(rng.Intn(3)) // equal timestamps happen
				chunk = append(chunk, tracefs.Event{TsNs: last[s], CPU: int32(s)})
			}
			all = append(all, chunk...)
			wm := last[s]
			if len(chunk) == 0 {
				last[s] += int64(rng.Intn(3))
				wm = last[s]
			}
			pushed++
			m.Push(s, chunk, wm, func([]tracefs.Event) { returned++ })
			if rng.Intn(3) == 0 {
				got = append(got, drainM(t, m)...)
			}
		}
		for s := 0; s < nsrc; s++ {
			m.Push(s, nil, Done, nil)
		}
		got = append(got, drainM(t, m)...)
		sort.SliceStable(all, func(i, j int) bool {
			return all[i].TsNs < all[j].TsNs || all[i].TsNs == all[j].TsNs && all[i].CPU < all[j].CPU
		})
		if len(got) != len(all) {
			t.Fatalf("round %d: %d events out, %d in", round, len(got), len(all))
		}
		for i := range all {
			if got[i].TsNs != all[i].TsNs || got[i].CPU != all[i].CPU {
				t.Fatalf("round %d: event %d = %+v, want %+v", round, i, got[i], all[i])
			}
		}
		if m.OutOfOrder != 0 || returned != pushed {
			t.Fatalf("round %d: out of order %d, chunks returned %d of %d", round, m.OutOfOrder, returned, pushed)
		}
	}
}
