package topology

// notes.go owns Topology.Notes: the sentences a viewer shows beside the grid so that a
// reader knows what the topology leaves out or bends (offline CPUs, CPU-less nodes, LLCs
// that span several nodes) and where sysfs had to be filled in (the reader's warnings).

import (
	"fmt"
	"slices"
	"strings"

	"placemap/collectors/internal/schema"
)

// notes derives the facts from the finished topology, then appends the warnings, so a
// recording keeps them all (the warnings used to reach only the collector's stderr).
func notes(t *schema.Topology, warnings []string) []string {
	var out []string
	var offline []int
	for _, c := range t.Cpus {
		if !c.Online {
			offline = append(offline, c.CPU)
		}
	}
	if len(offline) > 0 {
		out = append(out, fmt.Sprintf("%s offline when the topology was read (core and LLC unknown where sysfs gives none)",
			count(offline, "CPU %s was", "CPUs %s were")))
	}
	var cpuless []int
	for _, n := range t.NumaNodes {
		if len(n.Cpus) == 0 {
			cpuless = append(cpuless, n.ID)
		}
	}
	if len(cpuless) > 0 {
		out = append(out, fmt.Sprintf("%s no CPUs (memory only, e.g. HBM, CXL or persistent memory)",
			count(cpuless, "NUMA node %s has", "NUMA nodes %s have")))
	}
	var spans []string
	for _, l := range t.Llcs {
		if len(l.NumaNodes) > 1 {
			spans = append(spans, fmt.Sprintf("LLC %d spans nodes %s", l.ID, FormatCPUList(l.NumaNodes)))
		}
	}
	if len(spans) > 0 {
		out = append(out, "sub-NUMA clustering (SNC/NPS): "+strings.Join(spans, "; ")+
			". A move between such nodes inside one LLC counts as an llc-level migration, not node or cross_node")
	}
	return append(out, slices.Clone(warnings)...)
}

// count formats ids as a list into the singular or plural phrase.
func count(ids []int, one, many string) string {
	if len(ids) == 1 {
		return fmt.Sprintf(one, FormatCPUList(ids))
	}
	return fmt.Sprintf(many, FormatCPUList(ids))
}
