package importer

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"placemap/collectors/internal/schema"
)

// seedLines are real lines from ../shared/traces (one per form), plus hostile ones.
var seedLines = []string{
	"            bash-13109   [000] d..2.   319.952523: sched_switch: prev_comm=bash prev_pid=13109 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=13113 next_prio=120",
	" npm exec json2t-13093   [001] d..2.   319.954263: sched_switch: prev_comm=npm exec json2t prev_pid=13093 prev_prio=120 prev_state=R ==> next_comm=hackbench next_pid=13114 next_prio=120",
	"       hackbench-13113   [000] .....   319.953096: sched_process_exec: filename=/usr/bin/hackbench pid=13113 old_pid=13113",
	"            bash-13109   [000] .....   319.952333: sched_process_fork: comm=bash pid=13109 child_comm=bash child_pid=13113",
	"       hackbench-13220   [001] .....   320.124492: sched_process_exit: comm=hackbench pid=13220 prio=120 group_dead=true",
	"          stream-4401    [031] d..2.  1237.765506: sched_migrate_task: comm=stream pid=4392 prio=120 orig_cpu=206 dest_cpu=152 *LLC: 9 -> 3",
	"          <idle>-0     [000] d..2  1136.097721: cpu_idle: state=4294967295 cpu_id=0",
	"           <...>-19427 [000]  6550.018664: sched_wakeup_new:      comm=shutils pid=19428 prio=120 success=1 target_cpu=2",
	"capture:  memfd:sealed-91-1808  [000]   320.740104: sched_switch:         memfd:sealed-91:1808 [120] S ==> ksoftirqd/0:14 [120]",
	"                     bash-2599  [000]   103.223185: sched_wakeup_new:     bash:2601 [120] CPU:000",
	"              ls-4734  [002] 106439.675591: sched_switch:          prev_comm=trace-cmd prev_pid=4734 prev_prio=120 prev_state=1024 next_comm=migration/2 next_pid=18 next_prio=0",
	"     migration/9      67 [009] 105373.359904:               sched:sched_migrate_task: comm=perf pid=13418 prio=120 orig_cpu=9 dest_cpu=10",
	"            :256     256 [016] 105373.359913:                                vpa-dtl: timebase: 21403600706628832 dispatch_reason:decrementer interrupt",
	"CPU:1 [LOST 20 EVENTS]",
	"version = 6",
	"# entries-in-buffer/entries-written: 72578/72578   #P:2",
	"    bash-13109     0d..2.    0us : sched_switch: prev_comm=bash",
	"x-1 [0] 1: sched_switch: prev_comm=",
	"a-1 [2] x-999 [001] d..2. 1.2: sched_wakeup: comm=a pid=1 prio=1 pid=2 prio=3 target_cpu=9999999999999",
}

// FuzzParseLine: no input line may panic any of the three line parsers, and any row
// they produce has UTF-8 comms; and a comm of any 15 bytes put into the kernel's and
// trace-cmd's formats comes back intact.
func FuzzParseLine(f *testing.F) {
	for i, l := range seedLines {
		c := seedLines[(i*7)%len(seedLines)]
		f.Add([]byte(l), []byte(c[:min(len(c), 15)]))
	}
	f.Add([]byte(""), []byte("x pid=1 prio=1"))
	f.Add([]byte("\xff"), []byte("a:5 [120] CPU"))
	f.Add([]byte(" "), []byte("<script>"))
	f.Fuzz(func(t *testing.T, line, comm []byte) {
		line = bytes.ReplaceAll(line, []byte("\n"), nil)
		w := &worker{}
		for _, mode := range []struct{ perf, tracecmd bool }{{false, false}, {false, true}, {true, false}} {
			c := newCols()
			c.reset(4)
			var st stats
			hl := int64(0)
			w.line(line, mode.perf, mode.tracecmd, maxCPU, &st, c, &hl)
			c.finish()
			for i := 0; i < c.n; i++ {
				if s := c.comm.data[c.comm.off[i]:c.comm.off[i+1]]; !utf8.Valid(s) {
					t.Fatalf("comm %q not UTF-8", s)
				}
			}
		}
		if len(comm) > maxComm || bytes.IndexByte(comm, '\n') >= 0 {
			return
		}
		want, _, _ := escapeInto(nil, comm)
		cs := string(comm)
		forms := []struct {
			line string
			perf bool
			next bool // comm is next_comm
			pad  bool // trace-cmd pads after the event name: a comm's leading spaces are lost
		}{
			{"  t-1 [000] d..2. 1.000001: sched_waking: comm=" + cs + " pid=5 prio=120 target_cpu=001", false, false, false},
			{"  t-1 [000] d..2. 1.000001: sched_switch: prev_comm=" + cs + " prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=" + cs + " next_pid=6 next_prio=120", false, true, false},
			{"  t-1 [000] 1.000001: sched_wakeup: " + cs + ":5 [120] CPU:001", false, false, true},
			{"  t-1 [000] 1.000001: sched_migrate_task: comm=" + cs + " pid=5 prio=120 orig_cpu=0 dest_cpu=1", false, false, false},
			{"  t-1 [000] 1.000001: sched_process_fork: comm=" + cs + " pid=5 child_comm=" + cs + " child_pid=6", false, false, false},
			{"  t-1 [000] 1.000001: sched_process_exit: comm=" + cs + " pid=5 prio=120 group_dead=false", false, false, false},
			{"  perf 1 [000] 1.000001: sched:sched_wakeup_new: comm=" + cs + " pid=5 prio=120 target_cpu=001", true, false, false},
		}
		for _, fm := range forms {
			c := newCols()
			c.reset(4)
			var st stats
			hl := int64(0)
			reason, _ := w.line([]byte(fm.line), fm.perf, false, maxCPU, &st, c, &hl)
			if reason >= 0 || c.n != 1 {
				t.Fatalf("%q: skipped as %d", fm.line, reason)
			}
			c.finish()
			got := c.comm.data[c.comm.off[0]:c.comm.off[1]]
			want := want
			if fm.pad {
				want = bytes.TrimLeft(want, " \t")
			}
			if !bytes.Equal(got, want) || c.pid[0] != 5 {
				t.Fatalf("%q: comm %q pid %d, want %q 5", fm.line, got, c.pid[0], want)
			}
			if fm.next {
				nc := c.nextComm.data[c.nextComm.off[0]:c.nextComm.off[1]]
				if !bytes.Equal(nc, want) || c.nextPid.v[0] != 6 {
					t.Fatalf("%q: next_comm %q", fm.line, nc)
				}
			}
			if schema.Kind(c.kind[0]) == schema.KindFork && (c.childPid.v[0] != 6 || !bytes.Equal(c.childComm.data, want)) {
				t.Fatalf("%q: child %d %q", fm.line, c.childPid.v[0], c.childComm.data)
			}
			if schema.Kind(c.kind[0]) == schema.KindWaking && c.target.v[0] != 1 {
				t.Fatalf("%q: target %d", fm.line, c.target.v[0])
			}
		}
	})
}
