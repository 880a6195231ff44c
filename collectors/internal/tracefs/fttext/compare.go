package fttext

import (
	"fmt"
	"strings"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracefs"
)

// KernelUs is how the kernel prints a nanosecond timestamp in `trace` (ns2usecs rounds).
func KernelUs(ns int64) int64 { return (ns + 500) / 1000 }

// Options adjust Diff to the printer of the text.
type Options struct {
	// Us converts the decoder's nanoseconds to the printed microseconds.
	Us func(ns int64) int64
	// TraceCmdFlags, when set, says the text is trace-cmd's: its sched_switch plugin
	// prints prev_state from its own letter table (see TraceCmdState); these are the
	// kernel's flags to translate the decoded state with.
	TraceCmdFlags []tracefs.StateFlag
}

// Diff returns "" when ev states what line l printed, else a description.
func Diff(ev *tracefs.Event, l *Line, o Options) string {
	var d []string
	add := func(name string, got, want any) {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			d = append(d, fmt.Sprintf("%s: decoded %v, text %v", name, got, want))
		}
	}
	us := o.Us
	if us == nil {
		us = KernelUs
	}
	add("ts_us", us(ev.TsNs), l.TsUs)
	add("cpu", ev.CPU, l.CPU)
	add("kind", schema.KindNames[ev.Kind], KindOf[l.Event])
	add("cur_pid", ev.CurPid, l.CurPid)
	f, ok := Parse(l.Event, l.Body)
	if !ok {
		return fmt.Sprintf("line %d: text body did not parse: %q", l.No, l.Body)
	}
	if f.Has["pid"] {
		add("pid", ev.Pid, f.Pid)
	}
	if f.Has["comm"] {
		add("comm", ev.Comm, f.Comm)
	}
	if f.Has["prio"] {
		add("prio", ev.Prio, f.Prio)
		add("has_prio", ev.HasPrio, true)
	}
	if f.Has["target"] {
		add("target_cpu", ev.TargetCPU, f.Target)
	}
	if f.Has["orig"] {
		add("orig_cpu", ev.OrigCPU, f.Orig)
		add("dest_cpu", ev.DestCPU, f.Dest)
	}
	if f.Has["prev_state"] {
		st := ev.PrevState
		if o.TraceCmdFlags != nil && !strings.HasPrefix(l.Body, "prev_comm=") {
			st = TraceCmdState(st, o.TraceCmdFlags)
		}
		add("prev_state", st, f.PrevState)
		add("next_comm", ev.NextComm, f.NextComm)
		add("next_pid", ev.NextPid, f.NextPid)
		add("next_prio", ev.NextPrio, f.NextPrio)
	}
	if f.Has["child_pid"] {
		add("child_comm", ev.ChildComm, f.ChildComm)
		add("child_pid", ev.ChildPid, f.ChildPid)
	}
	if f.Has["filename"] {
		add("filename", ev.Filename, f.Filename)
		add("old_pid", ev.OldPid, f.OldPid)
	}
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprintf("line %d (%s: %s): %s", l.No, l.Event, l.Body, strings.Join(d, "; "))
}

// TraceCmdState renders a kernel-printed prev_state the way trace-cmd's sched_switch
// plugin prints the same value: its own fixed table "SDTtZXxW" for bits 0..7 (which
// differs from newer kernels' letters), "R" when none is set, no preemption marker.
// flags is the kernel's table from the event's print fmt.
func TraceCmdState(kernel string, flags []tracefs.StateFlag) string {
	var v uint64
	s := strings.TrimSuffix(kernel, "+")
	if s != "R" {
		for _, part := range strings.Split(s, "|") {
			for _, f := range flags {
				if f.Name == part {
					v |= f.Mask
				}
			}
		}
	}
	const table = "SDTtZXxW"
	var b strings.Builder
	for i := 0; i < len(table); i++ {
		if v&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteByte(table[i])
	}
	if b.Len() == 0 {
		return "R"
	}
	return b.String()
}
