package importer

// summary.go owns merging per-chunk statistics (in input order) into the
// ImportSummary that `import --json` prints.

import (
	"fmt"
	"math/bits"

	"placemap/collectors/internal/schema"
)

type merged struct {
	st          stats // sums; cpus OR-ed; first/last in input order
	hasLastSeen bool
	lastSeen    int64
	ooo         int
	hasTs       bool
	lastTs      int64
	minTs       int64
	maxTs       int64
}

func (m *merged) tsSeen(t int64) {
	if !m.hasTs {
		m.hasTs, m.minTs, m.maxTs = true, t, t
		return
	}
	if t < m.minTs {
		m.minTs = t
	}
	if t > m.maxTs {
		m.maxTs = t
	}
}

// add folds in the next chunk's result (after its pending timestamps were filled).
func (m *merged) add(r *result) {
	s := &r.st
	if s.hasTs {
		if m.hasTs && s.firstTs < m.lastTs {
			m.ooo++
		}
		m.tsSeen(s.minTs)
		m.tsSeen(s.maxTs)
		m.lastTs = s.lastTs
	}
	m.ooo += s.ooo
	if s.hasSeenTs {
		m.hasLastSeen, m.lastSeen = true, s.lastSeenTs
	}
	t := &m.st
	t.lines += s.lines
	for k := range s.kinds {
		t.kinds[k] += s.kinds[k]
	}
	for k := range s.skips {
		t.skips[k].merge(&s.skips[k])
	}
	t.annotated.merge(&s.annotated)
	for k := range s.cpus {
		t.cpus[k] |= s.cpus[k]
	}
	t.commEscaped += s.commEscaped
	t.lost += s.lost
	t.lostUnknown += s.lostUnknown
	t.rawTs += s.rawTs
	t.fracTs += s.fracTs
}

func (m *merged) summary(format Format, files []string, infos []*fileInfo, extra []string) *schema.ImportSummary {
	t := &m.st
	s := &schema.ImportSummary{
		Format:       schema.ImportSummaryFormat(format),
		Files:        files,
		LinesTotal:   t.lines,
		EventsByKind: schema.ImportSummaryEventsByKind{},
		Skipped:      schema.ImportSummarySkipped{},
		CpusSeen:     []int{},
		LostEvents:   int(t.lost),
		OutOfOrder:   m.ooo,
		CommEscaped:  t.commEscaped,
		Header:       schema.ImportSummaryHeader{},
	}
	for k, name := range schema.KindNames {
		s.EventsByKind[name] = t.kinds[k]
		s.EventsTotal += t.kinds[k]
	}
	for k := range t.skips {
		if t.skips[k].count == 0 {
			continue
		}
		sc := schema.SkipCount{Count: t.skips[k].count, FirstLines: []int{}}
		for i := 0; i < t.skips[k].count && i < maxFirst; i++ {
			sc.FirstLines = append(sc.FirstLines, t.skips[k].first[i])
		}
		s.Skipped[reasonNames[k]] = sc
		s.SkippedTotal += sc.Count
	}
	if m.hasTs {
		a, b := int(m.minTs), int(m.maxTs)
		s.TStartNS, s.TEndNS = &a, &b
	}
	for w, word := range t.cpus {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			s.CpusSeen = append(s.CpusSeen, w*64+b)
			word &^= 1 << b
		}
	}
	nr := 0
	var clock string
	for i, in := range infos {
		if in.nrCpus > nr {
			nr = in.nrCpus
		}
		if in.clock != "" && clock == "" {
			clock = in.clock
		}
		for k, v := range in.header {
			if i == 0 {
				s.Header[k] = v
			} else if _, ok := s.Header[k]; !ok {
				s.Header[k] = v
			}
		}
		if in.lost > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: header entries-written exceeds entries-in-buffer by %d: the ring buffer overwrote that many events before the oldest one kept; counted in lost_events and recorded as one `lost` row (cpu -1) dated at the file's first event", files[i], in.lost))
		}
	}
	if nr > 0 {
		s.NrCpus = &nr
	}
	if clock != "" {
		s.TraceClock = &clock
	}
	if t.annotated.count > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("annotated: %d events had text after their last field (hand annotations such as `*LLC: 9 -> 3` or `<--- ...`); the events were kept and the text ignored; first lines %v", t.annotated.count, t.annotated.first[:min(t.annotated.count, maxFirst)]))
	}
	if m.ooo > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d events were earlier than the event before them; the output was sorted by ts_ns (stable)", m.ooo))
	}
	if t.rawTs > 0 {
		if t.fracTs > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%d lines had raw counter timestamps and %d had secs.frac timestamps: mixed trace clocks, ts_ns is not one time base", t.rawTs, t.fracTs))
		} else {
			s.Warnings = append(s.Warnings, "timestamps have no decimal point (x86-tsc / counter trace_clock): ts_ns holds the raw counter values, not nanoseconds")
		}
	}
	if t.lostUnknown > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d lost-event records did not say how many events were lost (lost_events null); lost_events counts only the known ones", t.lostUnknown))
	}
	if len(files) > 1 {
		s.Warnings = append(s.Warnings, "line numbers in skipped count across the files in the order given (concatenated)")
	}
	s.Warnings = append(s.Warnings, extra...)
	return s
}
