package importer

import (
	"bufio"
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/shareddata"
)

// textTraces are every text trace in ../shared/traces and traces/external, with the
// format detection must report.
var textTraces = []struct {
	path   string
	format Format
	perf   bool
}{
	{"traces/vm2-hackbench-g4.ftrace.txt.gz", FormatFtrace, false},
	{"traces/vm2-hackbench-mixed.tracecmd-report.txt.gz", FormatTracecmd, false},
	{"traces/vm2-hackbench-g2.perf-script.txt.gz", FormatPerf, true},
	{"traces/vm2-hackbench-threads.tracefs-raw/trace.txt.gz", FormatFtrace, false},
	{"traces/zen3-2s-nps4-stream-excerpt-baseline.ftrace.txt", FormatFtrace, false},
	{"traces/zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt", FormatFtrace, false},
	{"traces/external/lisa/trace_txt/trace.txt", FormatTracecmd, false},
	{"traces/external/lisa/sched_load/trace.dat.trace-cmd-report.txt", FormatTracecmd, false},
	{"traces/external/lkml-snippets/powerpc-splpar_perf-script_sched+vpa-dtl_atrajeev-2025-09-15.txt", FormatPerf, true},
	{"traces/external/lkml-snippets/zen3-2s-256cpu_nps1_stream-pinned_sched_wakeup_new_fixed_f5b2eeb49991.txt", FormatFtrace, false},
	{"traces/external/lkml-snippets/zen3-2s-256cpu_nps1_stream-pinned_sched_wakeup_new_tip_f5b2eeb49991.txt", FormatFtrace, false},
	{"traces/external/lkml-snippets/zen3-2s-256cpu_nps4_stream_shortrun-patch_kprateek-2022-09-26.txt", FormatFtrace, false},
	{"traces/external/lkml-snippets/zen3-2s-256cpu_nps4_stream_tip_kprateek-2022-09-26.txt", FormatFtrace, false},
	{"traces/external/lkml-snippets/zen3-2s-256cpu_wake_affine_idle_example_kprateek-2022-09-26.txt", FormatFtrace, false},
	{"traces/external/trappy/raw_trace.dat.trace-cmd-report.txt", FormatTracecmd, false},
	{"traces/external/trappy/raw_trace.txt", FormatTracecmd, false},
	{"traces/external/trappy/trace_idle_unsorted.txt", FormatTracecmd, false},
	{"traces/external/trappy/trace_no_trailing_line.txt", FormatFtrace, false},
	{"traces/external/trappy/trace_sched.txt", FormatTracecmd, false},
}

var tracepoints = map[string]string{
	"sched_wakeup_new": "wakeup_new", "sched_waking": "waking", "sched_wakeup": "wakeup",
	"sched_migrate_task": "migrate", "sched_switch": "switch", "sched_process_fork": "fork",
	"sched_process_exit": "exit", "sched_process_exec": "exec",
}

// countByToken counts, independently of the parser, the lines naming each sched
// tracepoint as their event (` name: ` or perf's ` sched:name: `), minus lines whose
// sched fields are visibly cut (no `=`/`:` after the last field, e.g. trappy's
// truncated last line is handled by the caller).
func countByToken(data []byte, perf bool) map[string]int {
	got := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		for tp, kind := range tracepoints {
			tok := " " + tp + ": "
			if perf {
				tok = " sched:" + tp + ": "
			}
			if strings.Contains(l, tok) {
				got[kind]++
			}
		}
	}
	return got
}

func TestGoldenCountsEveryTextTrace(t *testing.T) {
	for _, tc := range textTraces {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			path := shareddata.Path(t, tc.path)
			want := countByToken(readText(t, path), tc.perf)
			out := filepath.Join(t.TempDir(), "out.arrow")
			s, err := Run(Options{Files: []string{path}, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			ts := readTs(t, out)
			if Format(s.Format) != tc.format {
				t.Errorf("format %s, want %s", s.Format, tc.format)
			}
			if strings.HasSuffix(tc.path, "trace_idle_unsorted.txt") {
				// its last line is a sched_switch cut after prev_pid
				want["switch"]--
				if sk := s.Skipped["truncated"]; sk.Count != 1 || sk.FirstLines[0] != 17 {
					t.Errorf("truncated %+v, want line 17", sk)
				}
			}
			total := 0
			for _, n := range want {
				total += n
			}
			for _, name := range schema.KindNames {
				if s.EventsByKind[name] != want[name] {
					t.Errorf("%s: %d events, file holds %d", name, s.EventsByKind[name], want[name])
				}
			}
			if s.EventsTotal != total || len(ts) != total {
				t.Errorf("events_total %d, rows %d, file holds %d", s.EventsTotal, len(ts), total)
			}
			if s.SkippedTotal+s.EventsTotal != s.LinesTotal {
				t.Errorf("skipped %d + events %d != lines %d", s.SkippedTotal, s.EventsTotal, s.LinesTotal)
			}
			for i := 1; i < len(ts); i++ {
				if ts[i] < ts[i-1] {
					t.Fatalf("row %d out of order", i)
				}
			}
			t.Logf("%s: %s %v", tc.path, s.Format, s.EventsByKind)
		})
	}
}

// The kernel's own per-CPU counters for the g4 capture: entries 36,557 + 36,021.
func TestGoldenG4AgainstKernelStats(t *testing.T) {
	stats := readText(t, shareddata.Path(t, "traces/vm2-hackbench-g4.percpu-stats.txt"))
	entries, overrun := 0, 0
	for _, l := range strings.Split(string(stats), "\n") {
		if v, ok := strings.CutPrefix(l, "entries: "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			entries += n
		}
		if v, ok := strings.CutPrefix(l, "overrun: "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			overrun += n
		}
	}
	if entries != 72578 {
		t.Fatalf("stats file entries %d", entries)
	}
	s, rows := importRows(t, FormatAuto, shareddata.Path(t, "traces/vm2-hackbench-g4.ftrace.txt.gz"))
	if s.EventsTotal != entries || s.LostEvents != overrun || s.EventsByKind["migrate"] != 629 || s.EventsByKind["lost"] != 0 {
		t.Errorf("events %d lost %d migrate %d; kernel says %d entries, %d overrun, README 629 migrations", s.EventsTotal, s.LostEvents, s.EventsByKind["migrate"], entries, overrun)
	}
	if s.NrCpus == nil || *s.NrCpus != 2 || len(s.CpusSeen) != 2 || s.OutOfOrder != 0 || s.CommEscaped != 0 {
		t.Errorf("summary %+v", s)
	}
	if s.Header["entries_in_buffer"] != int64(72578) || s.Header["entries_written"] != int64(72578) || s.Header["tracer"] != "nop" {
		t.Errorf("header %v", s.Header)
	}
	if *s.TStartNS != 319952333000 || *s.TEndNS != 320740194000 {
		t.Errorf("t_start %d t_end %d", *s.TStartNS, *s.TEndNS)
	}
	// first lines, field by field:
	//   bash-13109 [000] ..... 319.952333: sched_process_fork: comm=bash pid=13109 child_comm=bash child_pid=13113
	//   bash-13109 [000] d..2. 319.952374: sched_wakeup_new: comm=bash pid=13113 prio=120 target_cpu=000
	//   bash-13109 [000] d..2. 319.952523: sched_switch: prev_comm=bash prev_pid=13109 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=13113 next_prio=120
	//   hackbench-13113 [000] ..... 319.953096: sched_process_exec: filename=/usr/bin/hackbench pid=13113 old_pid=13113
	want := []row{
		{ts: 319952333000, cpu: 0, kind: schema.KindFork, curPid: 13109, pid: 13109, comm: "bash", childPid: p32(13113), childComm: pstr("bash")},
		{ts: 319952374000, cpu: 0, kind: schema.KindWakeupNew, curPid: 13109, pid: 13113, comm: "bash", prio: p32(120), target: p32(0)},
		{ts: 319952523000, cpu: 0, kind: schema.KindSwitch, curPid: 13109, pid: 13109, comm: "bash", prio: p32(120), prevState: pstr("S"), nextPid: p32(13113), nextComm: pstr("bash"), nextPrio: p32(120)},
		{ts: 319953096000, cpu: 0, kind: schema.KindExec, curPid: 13113, pid: 13113, comm: "hackbench", filename: pstr("/usr/bin/hackbench"), oldPid: p32(13113)},
		{ts: 319953188000, cpu: 0, kind: schema.KindWaking, curPid: 13113, pid: 15, comm: "rcu_preempt", prio: p32(120), target: p32(0)},
	}
	for i, w := range want {
		if d := diffRow(rows[i], w); d != "" {
			t.Errorf("row %d: %s", i, d)
		}
	}
	// a comm with spaces in both the TASK column and the fields:
	//  npm exec json2t-13093 [001] d..2. 319.954263: sched_switch: prev_comm=npm exec json2t prev_pid=13093 ... next_comm=hackbench next_pid=13114
	r := rows[10]
	if r.curPid != 13093 || r.comm != "npm exec json2t" || r.cpu != 1 || *r.nextPid != 13114 || *r.prevState != "R" {
		t.Errorf("npm exec row %+v", r)
	}
}

// diffRow compares the fields of w that are set (llc, util and lost must be null).
func diffRow(g, w row) string {
	var b strings.Builder
	eq32 := func(name string, a, b2 *int32) {
		if (a == nil) != (b2 == nil) || (a != nil && *a != *b2) {
			b.WriteString(name + " differs; ")
		}
	}
	eqs := func(name string, a, b2 *string) {
		if (a == nil) != (b2 == nil) || (a != nil && *a != *b2) {
			b.WriteString(name + " differs; ")
		}
	}
	if g.ts != w.ts || g.cpu != w.cpu || g.kind != w.kind || g.curPid != w.curPid || g.pid != w.pid || g.comm != w.comm {
		b.WriteString("ts/cpu/kind/cur_pid/pid/comm differ; ")
	}
	eq32("tgid", g.tgid, w.tgid)
	eq32("prio", g.prio, w.prio)
	eq32("target_cpu", g.target, w.target)
	eq32("orig_cpu", g.orig, w.orig)
	eq32("dest_cpu", g.dest, w.dest)
	eqs("prev_state", g.prevState, w.prevState)
	eq32("next_pid", g.nextPid, w.nextPid)
	eqs("next_comm", g.nextComm, w.nextComm)
	eq32("next_prio", g.nextPrio, w.nextPrio)
	eq32("child_pid", g.childPid, w.childPid)
	eqs("child_comm", g.childComm, w.childComm)
	eqs("filename", g.filename, w.filename)
	eq32("old_pid", g.oldPid, w.oldPid)
	if g.llc != nil || (g.lost != nil) != (w.lost != nil) || (g.lost != nil && *g.lost != *w.lost) {
		b.WriteString("llc/lost differ; ")
	}
	if b.Len() > 0 {
		return b.String() + "got " + fmtRow(g)
	}
	return ""
}

func fmtRow(r row) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(r.ts, 10) + " cpu=" + strconv.Itoa(int(r.cpu)) + " kind=" + schema.KindNames[r.kind] + " cur=" + strconv.Itoa(int(r.curPid)) + " pid=" + strconv.Itoa(int(r.pid)) + " comm=" + strconv.Quote(r.comm))
	for _, f := range []struct {
		n string
		v *int32
	}{{"prio", r.prio}, {"target", r.target}, {"orig", r.orig}, {"dest", r.dest}, {"next_pid", r.nextPid}, {"next_prio", r.nextPrio}, {"child_pid", r.childPid}, {"old_pid", r.oldPid}, {"tgid", r.tgid}} {
		if f.v != nil {
			b.WriteString(" " + f.n + "=" + strconv.Itoa(int(*f.v)))
		}
	}
	for _, f := range []struct {
		n string
		v *string
	}{{"prev_state", r.prevState}, {"next_comm", r.nextComm}, {"child_comm", r.childComm}, {"filename", r.filename}} {
		if f.v != nil {
			b.WriteString(" " + f.n + "=" + strconv.Quote(*f.v))
		}
	}
	if r.lost != nil {
		b.WriteString(" lost=" + strconv.FormatInt(*r.lost, 10))
	}
	return b.String()
}

// The tracefs-raw capture's text: 16,396 events with the README's per-kind counts.
func TestGoldenTracefsRawText(t *testing.T) {
	s, _ := importRows(t, FormatAuto, shareddata.Path(t, "traces/vm2-hackbench-threads.tracefs-raw/trace.txt.gz"))
	want := map[string]int{"switch": 6514, "waking": 4739, "wakeup": 4739, "migrate": 161, "wakeup_new": 81, "fork": 81, "exit": 81, "exec": 0, "lost": 0}
	for k, n := range want {
		if s.EventsByKind[k] != n {
			t.Errorf("%s %d, README says %d", k, s.EventsByKind[k], n)
		}
	}
	if s.EventsTotal != 16396 {
		t.Errorf("total %d", s.EventsTotal)
	}
}

// Zen3 LKML excerpt: pid 4392 moves 206 -> 152 -> 136 -> 240; the hand annotations
// (`*LLC: 9 -> 3`, `<--- ...`) are tolerated and reported.
func TestGoldenZen3Shortrun(t *testing.T) {
	for _, p := range []string{"traces/zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt", "traces/external/lkml-snippets/zen3-2s-256cpu_nps4_stream_shortrun-patch_kprateek-2022-09-26.txt"} {
		s, rows := importRows(t, FormatAuto, shareddata.Path(t, p))
		var moves [][2]int32
		for _, r := range rows {
			if r.kind == schema.KindMigrate && r.pid == 4392 {
				moves = append(moves, [2]int32{*r.orig, *r.dest})
				if r.comm != "stream" || *r.prio != 120 {
					t.Errorf("migrate row %s", fmtRow(r))
				}
			}
		}
		if len(moves) != 3 || moves[0] != [2]int32{206, 152} || moves[1] != [2]int32{152, 136} || moves[2] != [2]int32{136, 240} {
			t.Errorf("%s: moves %v", p, moves)
		}
		if s.SkippedTotal != 0 || s.EventsTotal != 31 {
			t.Errorf("skipped %v events %d", s.Skipped, s.EventsTotal)
		}
		if len(s.Warnings) == 0 || !strings.HasPrefix(s.Warnings[0], "annotated: 23 events") {
			t.Errorf("warnings %q", s.Warnings)
		}
		// first line: run_stream.sh-4383 [070] d..2. 1237.764236: sched_wakeup_new: comm=run_stream.sh pid=4392 prio=120 target_cpu=206 *LLC: 9
		w := row{ts: 1237764236000, cpu: 70, kind: schema.KindWakeupNew, curPid: 4383, pid: 4392, comm: "run_stream.sh", prio: p32(120), target: p32(206)}
		if d := diffRow(rows[0], w); d != "" {
			t.Error(d)
		}
		if s.CpusSeen[len(s.CpusSeen)-1] != 240 {
			t.Errorf("cpus_seen %v", s.CpusSeen)
		}
	}
}

// trace-cmd report's own sched formatting, incl. the `capture:` instance prefix.
func TestGoldenTracecmdReport(t *testing.T) {
	s, rows := importRows(t, FormatAuto, shareddata.Path(t, "traces/vm2-hackbench-mixed.tracecmd-report.txt.gz"))
	// line 1: cpus=2; line 2: bash-2599 [000] 103.223185: sched_wakeup_new: bash:2601 [120] CPU:000
	w := row{ts: 103223185000, cpu: 0, kind: schema.KindWakeupNew, curPid: 2599, pid: 2601, comm: "bash", prio: p32(120), target: p32(0)}
	if d := diffRow(rows[0], w); d != "" {
		t.Error(d)
	}
	// capture: bash-13109 [000] 319.952523: sched_switch: bash:13109 [120] S ==> bash:13113 [120]
	var found, memfd bool
	for _, r := range rows {
		if r.ts == 319952523000 && r.kind == schema.KindSwitch {
			found = true
			w := row{ts: 319952523000, cpu: 0, kind: schema.KindSwitch, curPid: 13109, pid: 13109, comm: "bash", prio: p32(120), prevState: pstr("S"), nextPid: p32(13113), nextComm: pstr("bash"), nextPrio: p32(120)}
			if d := diffRow(r, w); d != "" {
				t.Error(d)
			}
		}
		// capture:  memfd:sealed-91-1808  [000] 320.740104: sched_switch: memfd:sealed-91:1808 [120] S ==> ksoftirqd/0:14 [120]
		if r.ts == 320740104000 {
			memfd = r.curPid == 1808 && r.comm == "memfd:sealed-91" && r.pid == 1808 && *r.nextComm == "ksoftirqd/0" && *r.nextPid == 14
		}
	}
	if !found || !memfd {
		t.Errorf("switch rows not found/decoded: %v %v", found, memfd)
	}
	if s.NrCpus == nil || *s.NrCpus != 2 {
		t.Errorf("nr_cpus %v", s.NrCpus)
	}
	// trappy's report has numeric prev_state and no `==>`: prev_state=1024 next_comm=...
	_, rows = importRows(t, FormatAuto, shareddata.Path(t, "traces/external/trappy/raw_trace.txt"))
	w = row{ts: 106439675591000, cpu: 2, kind: schema.KindSwitch, curPid: 4734, pid: 4734, comm: "trace-cmd", prio: p32(120), prevState: pstr("1024"), nextPid: p32(18), nextComm: pstr("migration/2"), nextPrio: p32(0)}
	if d := diffRow(rows[0], w); d != "" {
		t.Error(d)
	}
	// old-kernel success=1 and padded event names
	_, rows = importRows(t, FormatAuto, shareddata.Path(t, "traces/external/trappy/trace_sched.txt"))
	w = row{ts: 6550018664000, cpu: 0, kind: schema.KindWakeupNew, curPid: 19427, pid: 19428, comm: "shutils", prio: p32(120), target: p32(2)}
	if d := diffRow(rows[0], w); d != "" {
		t.Error(d)
	}
}

// perf script: the powerpc excerpt's migrate 9 -> 10 and the vm2 capture.
func TestGoldenPerfScript(t *testing.T) {
	s, rows := importRows(t, FormatAuto, shareddata.Path(t, "traces/external/lkml-snippets/powerpc-splpar_perf-script_sched+vpa-dtl_atrajeev-2025-09-15.txt"))
	// migration/9 67 [009] 105373.359904: sched:sched_migrate_task: comm=perf pid=13418 prio=120 orig_cpu=9 dest_cpu=10
	w := row{ts: 105373359904000, cpu: 9, kind: schema.KindMigrate, curPid: 67, pid: 13418, comm: "perf", prio: p32(120), orig: p32(9), dest: p32(10)}
	if d := diffRow(rows[1], w); d != "" {
		t.Error(d)
	}
	if s.Skipped["other_event"].Count != 4 || s.EventsTotal != 4 {
		t.Errorf("skipped %v", s.Skipped)
	}
	// CPUs 16 and 17 record only the vpa-dtl lines, which are not events
	if got := s.CpusSeen; len(got) != 2 || got[0] != 9 || got[1] != 10 {
		t.Errorf("cpus_seen %v", got)
	}
	_, rows = importRows(t, FormatAuto, shareddata.Path(t, "traces/vm2-hackbench-g2.perf-script.txt.gz"))
	// perf 13481 [000] 329.561728: sched:sched_switch: prev_comm=perf prev_pid=13481 prev_prio=120 prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0
	w = row{ts: 329561728000, cpu: 0, kind: schema.KindSwitch, curPid: 13481, pid: 13481, comm: "perf", prio: p32(120), prevState: pstr("D"), nextPid: p32(18), nextComm: pstr("migration/0"), nextPrio: p32(0)}
	if d := diffRow(rows[2], w); d != "" {
		t.Error(d)
	}
}

// Binary files are named, never parsed as garbage.
func TestBinaryInputsRejected(t *testing.T) {
	for _, p := range []string{
		"traces/vm2-hackbench-mixed.trace.dat",
		"traces/vm2-hackbench-g2.perf.data",
		"traces/vm2-hackbench-threads.tracefs-raw/per_cpu/cpu0.raw",
		"traces/vm2-hackbench-threads.tracefs-raw/per_cpu/cpu1.raw",
		"traces/external/lisa/sched_load/trace.dat",
		"traces/external/trappy/raw_trace.dat",
		"traces/external/schedviz/test.tar.gz",
	} {
		out := filepath.Join(t.TempDir(), "x.arrow")
		_, err := Run(Options{Files: []string{shareddata.Path(t, p)}, Out: out})
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "binary format not supported by text import") {
			t.Errorf("%s: err %v", p, err)
		}
		if _, serr := filepathStat(out); serr == nil {
			t.Errorf("%s: output left behind", p)
		}
	}
}
