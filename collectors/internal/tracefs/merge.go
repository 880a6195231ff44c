package tracefs

import (
	"errors"
	"fmt"
	"io"
)

// Source is one CPU's ring-buffer pages: Size bytes at Off in R, page after page.
type Source struct {
	CPU  int32
	R    io.ReaderAt
	Off  int64
	Size int64
	Name string // for messages, e.g. "per_cpu/cpu0.raw"
}

// stream decodes one Source a page at a time.
type stream struct {
	src   Source
	order int
	d     *Decoder
	page  []byte
	pos   int64
	buf   []Event
	i     int
	err   error // an I/O error (not a bad page): stops the run
}

// head returns the stream's next event, decoding pages as needed; nil at the end.
func (s *stream) head() *Event {
	for s.i >= len(s.buf) {
		if s.pos >= s.src.Size || s.err != nil {
			return nil
		}
		s.buf, s.i = s.buf[:0], 0
		n := int64(len(s.page))
		if rem := s.src.Size - s.pos; rem < n {
			n = rem
		}
		got, err := s.src.R.ReadAt(s.page[:n], s.src.Off+s.pos)
		if err != nil && !(errors.Is(err, io.EOF) && int64(got) == n) {
			if errors.Is(err, io.EOF) {
				s.d.Stats.Skipped[SkipBadPage]++
				s.d.Stats.warnf("%s: file ends inside the page at %d", s.src.Name, s.pos)
				s.pos = s.src.Size
				return nil
			}
			s.err = fmt.Errorf("%s: %w", s.src.Name, err)
			return nil
		}
		at := s.pos
		s.pos += n
		s.buf, err = s.d.DecodePage(s.page[:n], s.src.CPU, s.buf)
		if err != nil {
			// Keep what decoded before the fault; the rest of the page is lost.
			s.d.Stats.Skipped[SkipBadPage]++
			s.d.Stats.warnf("%s: page at offset %d: %v", s.src.Name, at, err)
		}
	}
	return &s.buf[s.i]
}

// Run decodes the sources and hands their events to sink merged by timestamp; equal
// timestamps go in source order (CPU order when the caller sorted sources by CPU), as
// the kernel's own merge in `cat trace` does.
func (d *Decoder) Run(srcs []Source, sink Sink) error {
	return RunMerged([]Part{{D: d, Sources: srcs}}, sink)
}

// Part is one buffer's decoder and its per-CPU sources.
type Part struct {
	D       *Decoder
	Sources []Source
}

// RunMerged is Run over several buffers (e.g. a trace.dat's top buffer and
// instances): one timeline, ties in part order then source order.
func RunMerged(parts []Part, sink Sink) error {
	var h []*stream
	order := 0
	for _, p := range parts {
		for _, src := range p.Sources {
			s := &stream{src: src, order: order, d: p.D, page: make([]byte, p.D.pageSize), buf: make([]Event, 0, 256)}
			order++
			if s.head() != nil {
				h = append(h, s)
			} else if s.err != nil {
				return s.err
			}
		}
	}
	less := func(a, b *stream) bool {
		x, y := &a.buf[a.i], &b.buf[b.i]
		return x.TsNs < y.TsNs || x.TsNs == y.TsNs && a.order < b.order
	}
	down := func(i int) {
		n := len(h)
		for {
			l := 2*i + 1
			if l >= n {
				return
			}
			m := l
			if r := l + 1; r < n && less(h[r], h[l]) {
				m = r
			}
			if !less(h[m], h[i]) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	var last int64
	first := true
	for len(h) > 0 {
		s := h[0]
		ev := &s.buf[s.i]
		if !first && ev.TsNs < last {
			s.d.Stats.OutOfOrder++
		}
		first, last = false, ev.TsNs
		if err := sink.Add(ev); err != nil {
			return err
		}
		s.i++
		if s.head() == nil {
			if s.err != nil {
				return s.err
			}
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		if len(h) > 0 {
			down(0)
		}
	}
	return nil
}
