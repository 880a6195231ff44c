package tracefs

import (
	"fmt"
	"sort"

	"placemap/collectors/internal/schema"
)

// Summary renders r as the import summary the `import` command prints.
func (r *Result) Summary(files []string) *schema.ImportSummary {
	s := &schema.ImportSummary{
		Format:       schema.ImportSummaryFormat(r.Format),
		Files:        files,
		EventsByKind: schema.ImportSummaryEventsByKind{},
		Skipped:      schema.ImportSummarySkipped{},
		CpusSeen:     []int{},
		OutOfOrder:   r.Stats.OutOfOrder,
		CommEscaped:  r.CommEscaped,
		LostEvents:   int(r.Stats.LostEvents),
		Header:       schema.ImportSummaryHeader{},
		Warnings:     append([]string(nil), r.Stats.Warnings...),
	}
	for k, name := range schema.KindNames {
		s.EventsByKind[name] = r.Stats.EventsByKind[k]
		s.EventsTotal += r.Stats.EventsByKind[k]
	}
	for reason, n := range r.Stats.Skipped {
		if n > 0 {
			// Binary records have no line numbers.
			s.Skipped[reason] = schema.SkipCount{Count: n, FirstLines: []int{}}
			s.SkippedTotal += n
		}
	}
	for c := range r.CPUsSeen {
		if c >= 0 {
			s.CpusSeen = append(s.CpusSeen, int(c))
		}
	}
	sort.Ints(s.CpusSeen)
	if r.HaveTimes {
		a, b := int(r.TStart), int(r.TEnd)
		s.TStartNS, s.TEndNS = &a, &b
	}
	if r.NrCPUs > 0 {
		n := r.NrCPUs
		s.NrCpus = &n
	}
	if r.TraceClock != "" {
		c := r.TraceClock
		s.TraceClock = &c
	}
	for k, v := range r.Header {
		s.Header[k] = v
	}
	if len(r.Buffers) > 0 {
		s.Header["buffers"] = append([]string(nil), r.Buffers...)
	}
	s.Header["pages"] = r.Stats.Pages
	records := map[string]int{}
	for c, n := range r.Stats.Records {
		records[fmt.Sprint(c)] = n
	}
	s.Header["records_per_cpu"] = records
	if r.Stats.LostUnknown > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d ring-buffer pages say events were lost without room to store how many: each is a `lost` row with lost_events -1, not counted in lost_events", r.Stats.LostUnknown))
	}
	return s
}
