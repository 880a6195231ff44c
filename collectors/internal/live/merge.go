package live

// merge.go owns the streaming timestamp merge: per-source queues of events that are each
// in time order, and per-source watermarks (a promise that the source's future events
// are no earlier). Emit hands out, in (ts, source) order, every queued event up to the
// lowest watermark, so the output is one ordered stream while the sources keep going.

import (
	"math"

	"placemap/collectors/internal/tracefs"
)

// Done is the watermark of a source that will send nothing more.
const Done = math.MaxInt64

type chunk struct {
	evs  []tracefs.Event
	i    int
	done func([]tracefs.Event) // gives the slice back to its producer, once emitted
}

type source struct {
	q  []chunk
	wm int64
}

func (s *source) head() *tracefs.Event {
	for len(s.q) > 0 {
		c := &s.q[0]
		if c.i < len(c.evs) {
			return &c.evs[c.i]
		}
		if c.done != nil {
			c.done(c.evs)
		}
		s.q[0] = chunk{}
		s.q = s.q[1:]
	}
	return nil
}

// Merger merges sources by timestamp; ties go in source order. Not safe for
// concurrent use: one goroutine pushes and emits.
type Merger struct {
	src        []source
	h          []int // heap of source indexes with a head event
	last       int64
	OutOfOrder int // events emitted earlier than the event before them
	Emitted    int
}

// NewMerger merges n sources; every watermark starts at the beginning of time.
func NewMerger(n int) *Merger {
	m := &Merger{src: make([]source, n), last: math.MinInt64}
	for i := range m.src {
		m.src[i].wm = math.MinInt64
	}
	return m
}

// Push queues evs (in time order) from source i and raises its watermark to wm (and to
// its last event's ts). done, if not nil, receives evs back once all are emitted.
func (m *Merger) Push(i int, evs []tracefs.Event, wm int64, done func([]tracefs.Event)) {
	s := &m.src[i]
	if len(evs) > 0 {
		s.q = append(s.q, chunk{evs: evs, done: done})
		wm = max(wm, evs[len(evs)-1].TsNs)
	} else if done != nil {
		done(evs)
	}
	s.wm = max(s.wm, wm)
}

// Watermark returns the merge's current limit: the lowest source watermark.
func (m *Merger) Watermark() int64 {
	lim := int64(math.MaxInt64)
	for i := range m.src {
		lim = min(lim, m.src[i].wm)
	}
	return lim
}

// Pending counts queued events.
func (m *Merger) Pending() int {
	n := 0
	for i := range m.src {
		for _, c := range m.src[i].q {
			n += len(c.evs) - c.i
		}
	}
	return n
}

func (m *Merger) less(a, b int) bool {
	x, y := m.src[a].head(), m.src[b].head()
	return x.TsNs < y.TsNs || x.TsNs == y.TsNs && a < b
}

func (m *Merger) down(i int) {
	h := m.h
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			c = r
		}
		if !m.less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// Emit calls fn for every queued event earlier than the lowest watermark (a source may
// still send events at its watermark), in order; everything once all sources are Done.
func (m *Merger) Emit(fn func(*tracefs.Event) error) error {
	lim := m.Watermark()
	switch lim {
	case math.MinInt64:
		return nil // a source has not spoken yet
	case Done:
	default:
		lim-- // ts <= lim
	}
	m.h = m.h[:0]
	for i := range m.src {
		if ev := m.src[i].head(); ev != nil && ev.TsNs <= lim {
			m.h = append(m.h, i)
		}
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	for len(m.h) > 0 {
		s := &m.src[m.h[0]]
		ev := s.head()
		if ev.TsNs < m.last {
			m.OutOfOrder++
		}
		m.last = max(m.last, ev.TsNs)
		if err := fn(ev); err != nil {
			return err
		}
		m.Emitted++
		s.q[0].i++
		if nx := s.head(); nx == nil || nx.TsNs > lim {
			m.h[0] = m.h[len(m.h)-1]
			m.h = m.h[:len(m.h)-1]
		}
		if len(m.h) > 0 {
			m.down(0)
		}
	}
	return nil
}
