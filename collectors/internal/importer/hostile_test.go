package importer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/shareddata"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const hdr2 = "# tracer: nop\n#\n# entries-in-buffer/entries-written: 9/9   #P:2\n#\n"

func TestHostileComms(t *testing.T) {
	text := hdr2 +
		// 1: <script> and a next_comm that looks like other fields
		"        <script>-1234    [001] d..2.   100.000001: sched_switch: prev_comm=<script> prev_pid=1234 prev_prio=120 prev_state=S ==> next_comm=x pid=1 prio=1 next_pid=77 next_prio=120\n" +
		// 2: a wakee whose comm holds `pid=` / `prio=` text
		"  x pid=1 prio=1-77      [001] d..2.   100.000002: sched_waking: comm=x pid=1 prio=1 pid=55 prio=120 target_cpu=001\n" +
		// 3: `=` and spaces
		"           a=b c-9       [000] .....   100.000003: sched_process_fork: comm=a=b c pid=9 child_comm=a=b c child_pid=10\n" +
		// 4: a TASK comm that holds a dash, digits and brackets
		"      a-1 [2] x-999      [001] d..2.   100.000004: sched_wakeup: comm=a-1 [2] x pid=999 prio=120 target_cpu=000\n" +
		// 5: not UTF-8
		"        \xff\xfeab-5       [000] d..2.   100.000005: sched_switch: prev_comm=\xff\xfeab prev_pid=5 prev_prio=120 prev_state=R+ ==> next_comm=ok\xc3\xa9 next_pid=6 next_prio=100\n" +
		// 6: a file name holding ` pid=N old_pid=N`
		"       hackbench-100     [000] .....   100.000006: sched_process_exec: filename=/tmp/a pid=3 old_pid=4 b pid=100 old_pid=101\n" +
		// 7: quotes and a 15-byte comm
		"  \"q\" 'r' \\s 123-8       [000] d..2.   100.000007: sched_process_exit: comm=\"q\" 'r' \\s 123 pid=8 prio=120 group_dead=true\n" +
		// 8: record-tgid column
		"            bash-13109   (  13100) [000] d..2.   100.000008: sched_migrate_task: comm=bash pid=13109 prio=120 orig_cpu=0 dest_cpu=1\n" +
		"            bash-13110   (-------) [000] d..2.   100.000009: sched_wakeup_new: comm=bash pid=13111 prio=120 target_cpu=001\n"
	s, rows := importRows(t, FormatAuto, writeFile(t, "hostile.txt", []byte(text)))
	if s.EventsTotal != 9 || s.SkippedTotal != 4 {
		t.Fatalf("events %d skipped %v", s.EventsTotal, s.Skipped)
	}
	want := []row{
		{ts: 100000001000, cpu: 1, kind: schema.KindSwitch, curPid: 1234, pid: 1234, comm: "<script>", prio: p32(120), prevState: pstr("S"), nextPid: p32(77), nextComm: pstr("x pid=1 prio=1"), nextPrio: p32(120)},
		{ts: 100000002000, cpu: 1, kind: schema.KindWaking, curPid: 77, pid: 55, comm: "x pid=1 prio=1", prio: p32(120), target: p32(1)},
		{ts: 100000003000, cpu: 0, kind: schema.KindFork, curPid: 9, pid: 9, comm: "a=b c", childPid: p32(10), childComm: pstr("a=b c")},
		{ts: 100000004000, cpu: 1, kind: schema.KindWakeup, curPid: 999, pid: 999, comm: "a-1 [2] x", prio: p32(120), target: p32(0)},
		{ts: 100000005000, cpu: 0, kind: schema.KindSwitch, curPid: 5, pid: 5, comm: `\xff\xfeab`, prio: p32(120), prevState: pstr("R+"), nextPid: p32(6), nextComm: pstr("ok\u00e9"), nextPrio: p32(100)},
		{ts: 100000006000, cpu: 0, kind: schema.KindExec, curPid: 100, pid: 100, comm: "hackbench", filename: pstr("/tmp/a pid=3 old_pid=4 b"), oldPid: p32(101)},
		{ts: 100000007000, cpu: 0, kind: schema.KindExit, curPid: 8, pid: 8, comm: `"q" 'r' \s 123`, prio: p32(120)},
		{ts: 100000008000, cpu: 0, kind: schema.KindMigrate, curPid: 13109, tgid: p32(13100), pid: 13109, comm: "bash", prio: p32(120), orig: p32(0), dest: p32(1)},
		{ts: 100000009000, cpu: 0, kind: schema.KindWakeupNew, curPid: 13110, pid: 13111, comm: "bash", prio: p32(120), target: p32(1)},
	}
	for i, w := range want {
		if d := diffRow(rows[i], w); d != "" {
			t.Errorf("row %d: %s", i, d)
		}
	}
	if s.CommEscaped != 1 {
		t.Errorf("comm_escaped %d", s.CommEscaped)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings %q", s.Warnings)
	}
}

func TestHostileTracecmdAndPerfForms(t *testing.T) {
	tc := "version = 6\nCPU 1 is empty\ncpus=4\n" +
		"         a:1 [2]-500   [003]   100.000001: sched_wakeup:         a:1 [2]:500 [120] success=1 CPU:002\n" +
		"inst:       x y-7      [000]   100.000002: sched_switch:         x y:7 [120] R+ ==> a:b:8 [99]\n"
	s, rows := importRows(t, FormatAuto, writeFile(t, "tc.txt", []byte(tc)))
	if s.Format != "tracecmd" || s.EventsTotal != 2 || s.Skipped["header"].Count != 3 || *s.NrCpus != 4 {
		t.Fatalf("summary %+v", s)
	}
	if d := diffRow(rows[0], row{ts: 100000001000, cpu: 3, kind: schema.KindWakeup, curPid: 500, pid: 500, comm: "a:1 [2]", prio: p32(120), target: p32(2)}); d != "" {
		t.Error(d)
	}
	if d := diffRow(rows[1], row{ts: 100000002000, cpu: 0, kind: schema.KindSwitch, curPid: 7, pid: 7, comm: "x y", prio: p32(120), prevState: pstr("R+"), nextPid: p32(8), nextComm: pstr("a:b"), nextPrio: p32(99)}); d != "" {
		t.Error(d)
	}
	perf := "  npm exec json2t 13093 [001]     1.000001:       sched:sched_switch: prev_comm=npm exec json2t prev_pid=13093 prev_prio=120 prev_state=R ==> next_comm=swapper/1 next_pid=0 next_prio=120\n" +
		"            perf 100/101 [000]     1.000002:       sched:sched_waking: comm=a b pid=5 prio=120 target_cpu=001\n" +
		"            perf 100/101 [000]     1.000003: PERF_RECORD_LOST lost 17\n"
	s, rows = importRows(t, FormatAuto, writeFile(t, "perf.txt", []byte(perf)))
	if s.Format != "perf" || s.EventsTotal != 3 || s.LostEvents != 17 {
		t.Fatalf("summary %+v", s)
	}
	if d := diffRow(rows[0], row{ts: 1000001000, cpu: 1, kind: schema.KindSwitch, curPid: 13093, pid: 13093, comm: "npm exec json2t", prio: p32(120), prevState: pstr("R"), nextPid: p32(0), nextComm: pstr("swapper/1"), nextPrio: p32(120)}); d != "" {
		t.Error(d)
	}
	if d := diffRow(rows[1], row{ts: 1000002000, cpu: 0, kind: schema.KindWaking, curPid: 101, tgid: p32(100), pid: 5, comm: "a b", prio: p32(120), target: p32(1)}); d != "" {
		t.Error(d)
	}
	l17 := int64(17)
	if d := diffRow(rows[2], row{ts: 1000003000, cpu: 0, kind: schema.KindLost, curPid: 0, pid: 0, comm: "", lost: &l17}); d != "" {
		t.Error(d)
	}
}

func TestTruncatedGzip(t *testing.T) {
	full := readText(t, shareddata.Path(t, "traces/vm2-hackbench-g4.ftrace.txt.gz"))
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(full)
	z.Close()
	cut := b.Bytes()[:b.Len()/2]
	s, rows := importRows(t, FormatAuto, writeFile(t, "cut.txt.gz", cut))
	if s.EventsTotal < 1000 || s.EventsTotal >= 72578 {
		t.Fatalf("events %d", s.EventsTotal)
	}
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "gzip stream is truncated") {
		t.Errorf("warnings %q", s.Warnings)
	}
	// what was kept is exactly the start of the full import
	_, all := importRows(t, FormatAuto, shareddata.Path(t, "traces/vm2-hackbench-g4.ftrace.txt.gz"))
	for i, r := range rows {
		if d := diffRow(r, all[i]); d != "" {
			t.Fatalf("row %d: %s", i, d)
		}
	}
	// the cut line is reported (unless the cut fell exactly after a full event)
	if sk := s.Skipped["truncated"]; sk.Count > 1 || s.LinesTotal != s.EventsTotal+12+sk.Count {
		t.Errorf("lines %d events %d skipped %v", s.LinesTotal, s.EventsTotal, s.Skipped)
	}
}

func TestCutLastLineAndCPURange(t *testing.T) {
	text := hdr2 +
		"            bash-1       [000] d..2.   100.000001: sched_wakeup: comm=a pid=2 prio=120 target_cpu=001\n" +
		"            bash-1       [005] d..2.   100.000002: sched_wakeup: comm=a pid=2 prio=120 target_cpu=001\n" +
		"            bash-1       [001] d..2.   100.000003: sched_wakeup: comm=a pid=2 prio=120 target_cpu=009\n" +
		"            bash-1       [001] d..2.   100.000004: sched_switch: prev_comm=ba"
	s, _ := importRows(t, FormatAuto, writeFile(t, "cut.txt", []byte(text)))
	if s.EventsTotal != 1 || s.Skipped["cpu_out_of_range"].Count != 2 || s.Skipped["cpu_out_of_range"].FirstLines[0] != 6 ||
		s.Skipped["truncated"].Count != 1 || s.Skipped["truncated"].FirstLines[0] != 8 {
		t.Errorf("summary %+v", s)
	}
	// cut inside the event name
	text = "            bash-1       [000] d..2.   100.000001: sched_wakeup: comm=a pid=2 prio=120 target_cpu=001\n" +
		"            bash-1       [000] d..2.   100.000002: sched_swi"
	s, _ = importRows(t, FormatAuto, writeFile(t, "cut2.txt", []byte(text)))
	if s.EventsTotal != 1 || s.Skipped["truncated"].Count != 1 || s.Skipped["truncated"].FirstLines[0] != 2 {
		t.Errorf("cut event name: %+v", s)
	}
	// without a header the limit is 8191
	text = "            bash-1       [9000] d..2.   100.000001: sched_wakeup: comm=a pid=2 prio=120 target_cpu=001\n" +
		"            bash-1       [8191] d..2.   100.000002: sched_wakeup: comm=a pid=2 prio=120 target_cpu=001\n"
	s, _ = importRows(t, FormatAuto, writeFile(t, "big.txt", []byte(text)))
	if s.EventsTotal != 1 || s.Skipped["cpu_out_of_range"].Count != 1 {
		t.Errorf("summary %+v", s)
	}
}

func TestRejectedFormats(t *testing.T) {
	cases := map[string]string{
		"latency-format": "# tracer: nop\n#\n# nop latency trace v1.1.5 on 6.18.0\n# --------------------------------------------------------------------\n" +
			"#                    _------=> CPU#\n#     cmd     pid     |||||| time  |   caller\n" +
			"    bash-13109     0d..2.    0us : sched_switch: prev_comm=bash prev_pid=13109 prev_prio=120 prev_state=S ==> next_comm=x next_pid=2 next_prio=120\n",
		"latency-format data only": "    bash-13109     0d..2.    0us : sched_switch: prev_comm=bash prev_pid=13109 prev_prio=120 prev_state=S ==> next_comm=x next_pid=2 next_prio=120\n" +
			"    bash-13109     0d..2.   12us+: sched_waking: comm=a pid=2 prio=120 target_cpu=001\n",
		"trace_pipe_raw as text": "\x00\x10\x00\x00\x00\x00\x00\x00\xe8\x0f\x00\x00\x00\x00\x00\x00" + strings.Repeat("\x00\x01\x02", 100),
		"unknown format":         "hello world\nthis is not a trace\n",
		"options/raw":            "13109 0 319952523 type: 318\n13109 0 319952524 type: 318\n",
	}
	wants := map[string]string{
		"latency-format":           "options/latency-format",
		"latency-format data only": "options/latency-format",
		"trace_pipe_raw as text":   "binary format not supported by text import",
		"unknown format":           "tried ftrace",
		"options/raw":              "options/raw",
	}
	for name, text := range cases {
		_, err := Run(Options{Files: []string{writeFile(t, "in.txt", []byte(text))}, Out: filepath.Join(t.TempDir(), "o.arrow")})
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), wants[name]) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	// --format perf on ftrace text is refused too
	_, err := Run(Options{Files: []string{shareddata.Path(t, "traces/zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt")}, Format: FormatPerf, Out: filepath.Join(t.TempDir(), "o.arrow")})
	if err == nil || !strings.Contains(err.Error(), "--format perf") {
		t.Errorf("forced perf: %v", err)
	}
}

func TestFunctionTracerIsNotAnError(t *testing.T) {
	text := "# tracer: function\n#\n# entries-in-buffer/entries-written: 2/2   #P:2\n#\n" +
		"            bash-13109   [000] .....   319.952333: do_sys_open <-__x64_sys_openat\n" +
		"            bash-13109   [000] .....   319.952334: getname <-do_sys_open\n"
	s, rows := importRows(t, FormatAuto, writeFile(t, "fn.txt", []byte(text)))
	if s.EventsTotal != 0 || len(rows) != 0 || s.Skipped["other_event"].Count != 2 || s.TStartNS != nil {
		t.Errorf("summary %+v", s)
	}
}

func TestUnsortedAndMultipleFiles(t *testing.T) {
	line := func(ts, pid string) string {
		return "            bash-1       [000] d..2.   " + ts + ": sched_wakeup: comm=a pid=" + pid + " prio=120 target_cpu=001\n"
	}
	a := writeFile(t, "a.txt", []byte(line("5.000001", "1")+line("5.000003", "2")+line("5.000002", "3")+line("5.000002", "4")))
	b := writeFile(t, "b.txt", []byte(line("1.000000", "5")+line("9.000000", "6")))
	s, rows := importRows(t, FormatAuto, a, b)
	if s.OutOfOrder != 2 || s.EventsTotal != 6 || len(s.Files) != 2 {
		t.Fatalf("summary %+v", s)
	}
	var pids []int32
	for _, r := range rows {
		pids = append(pids, r.pid)
	}
	// stable: 3 before 4 (equal ts, file order)
	if want := []int32{5, 1, 3, 4, 2, 6}; !equal32(pids, want) {
		t.Errorf("order %v, want %v", pids, want)
	}
	// trappy's unsorted file: its sched_switch events are in order (only cpu_idle is not)
	s, _ = importRows(t, FormatAuto, shareddata.Path(t, "traces/external/trappy/trace_idle_unsorted.txt"))
	if s.OutOfOrder != 0 {
		t.Errorf("trappy out_of_order %d", s.OutOfOrder)
	}
}

func equal32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLostAndClocks(t *testing.T) {
	text := "# tracer: nop\n#\n# entries-in-buffer/entries-written: 3/10   #P:2\n#\n" +
		"            bash-1       [000] d..2.   100.000001: sched_wakeup: comm=a pid=2 prio=120 target_cpu=001\n" +
		"CPU:1 [LOST 20 EVENTS]\n" +
		"            bash-1       [001] d..2.   100.000002: sched_wakeup: comm=a pid=2 prio=120 target_cpu=001\n" +
		"            bash-1       [001] d..2.   100.000002345: sched_wakeup: comm=a pid=2 prio=120 target_cpu=001\n"
	s, rows := importRows(t, FormatAuto, writeFile(t, "lost.txt", []byte(text)))
	if s.LostEvents != 27 || s.EventsByKind["lost"] != 2 || s.EventsTotal != 5 {
		t.Fatalf("summary %+v", s)
	}
	l7, l20 := int64(7), int64(20)
	if d := diffRow(rows[0], row{ts: 100000001000, cpu: -1, kind: schema.KindLost, lost: &l7}); d != "" {
		t.Error("header lost:", d)
	}
	if d := diffRow(rows[2], row{ts: 100000001000, cpu: 1, kind: schema.KindLost, lost: &l20}); d != "" {
		t.Error("LOST line:", d)
	}
	if rows[4].ts != 100000002345 {
		t.Errorf("nsec timestamp %d", rows[4].ts)
	}
	// x86-tsc: raw counter values
	raw := "            bash-1       [000] d..2.   123456789012: sched_wakeup: comm=a pid=2 prio=120 target_cpu=001\n"
	s, rows = importRows(t, FormatAuto, writeFile(t, "tsc.txt", []byte(raw)))
	if rows[0].ts != 123456789012 || !strings.Contains(strings.Join(s.Warnings, ""), "raw counter") {
		t.Errorf("tsc: %d %q", rows[0].ts, s.Warnings)
	}
}

func TestStdoutAndProgress(t *testing.T) {
	var out, prog bytes.Buffer
	s, err := Run(Options{Files: []string{shareddata.Path(t, "traces/vm2-hackbench-g2.perf-script.txt.gz")}, Out: "-", Stdout: &out, Progress: &prog})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := ipc.NewReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rd.Next() {
		n += int(rd.RecordBatch().NumRows())
	}
	if n != s.EventsTotal || n != 9903 {
		t.Errorf("rows %d", n)
	}
	lines := strings.Split(strings.TrimSpace(prog.String()), "\n")
	var last struct {
		BytesRead  int64 `json:"bytes_read"`
		BytesTotal int64 `json:"bytes_total"`
		Events     int64 `json:"events"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last.BytesTotal != 65959 || last.BytesRead != last.BytesTotal || last.Events != 9903 {
		t.Errorf("progress %+v", last)
	}
	// an empty input is a valid, empty stream
	s, rows := importRows(t, FormatAuto, writeFile(t, "empty.txt", nil))
	if s.EventsTotal != 0 || len(rows) != 0 {
		t.Errorf("empty: %+v", s)
	}
}

// `--out -` streams: disorder within the held rows is sorted, later disorder is a
// named error (it cannot take back what it wrote).
func TestStreamOrdering(t *testing.T) {
	line := func(ts, pid string) string {
		return "            bash-1       [000] d..2.   " + ts + ": sched_wakeup: comm=a pid=" + pid + " prio=120 target_cpu=001\n"
	}
	in := writeFile(t, "u.txt", []byte(line("5.000003", "1")+line("5.000001", "2")+line("6.0", "3")))
	var out bytes.Buffer
	s, err := Run(Options{Files: []string{in}, Out: "-", Stdout: &out})
	if err != nil || s.OutOfOrder != 1 {
		t.Fatalf("%v %+v", err, s)
	}
	p := writeFile(t, "o.arrow", out.Bytes())
	rows := readRows(t, p)
	if len(rows) != 3 || rows[0].pid != 2 || rows[1].pid != 1 || rows[2].pid != 3 {
		t.Errorf("rows %v", rows)
	}
	defer func(h int) { holdRows = h }(holdRows)
	holdRows = 1
	// a second file (a second chunk) that goes back in time after streaming began
	in2 := writeFile(t, "v.txt", []byte(line("1.0", "4")))
	out.Reset()
	_, err = Run(Options{Files: []string{in, in2}, Out: "-", Stdout: &out})
	if err == nil || !strings.Contains(err.Error(), "--out X.arrow") {
		t.Errorf("err %v", err)
	}
	// the same files to a file are sorted
	_, rows = importRows(t, FormatAuto, in, in2)
	if len(rows) != 4 || rows[0].pid != 4 {
		t.Errorf("file rows %v", rows)
	}
}

// irq-info off (no flags column), trace-cmd's dropped-events lines, CRLF line ends.
func TestIrqInfoOffAndDropped(t *testing.T) {
	text := "cpus=2\r\n" +
		"            bash-7     [001]   100.000001: sched_waking: comm=a pid=2 prio=120 target_cpu=000\r\n" +
		"CPU:0 [12 EVENTS DROPPED]\r\n" +
		"            bash-7     [000]   100.000002: sched_wakeup: comm=a pid=2 prio=120 target_cpu=000\r\n" +
		"CPU:1 [EVENTS DROPPED]\r\n"
	s, rows := importRows(t, FormatAuto, writeFile(t, "d.txt", []byte(text)))
	if s.EventsTotal != 4 || s.LostEvents != 12 || s.EventsByKind["lost"] != 2 || len(s.Warnings) != 1 {
		t.Fatalf("summary %+v", s)
	}
	if d := diffRow(rows[0], row{ts: 100000001000, cpu: 1, kind: schema.KindWaking, curPid: 7, pid: 2, comm: "a", prio: p32(120), target: p32(0)}); d != "" {
		t.Error(d)
	}
	if rows[3].kind != schema.KindLost || rows[3].lost != nil || rows[3].cpu != 1 || rows[3].ts != 100000002000 {
		t.Errorf("unknown-count drop %s", fmtRow(rows[3]))
	}
}

// TestMappedEqualsRead imports every text trace twice, plain (mapped, mmap_unix.go) and
// gzip (read and decompressed), with chunks of a few KB so that both cut each file in
// many places: the rows and the summary must be the same.
func TestMappedEqualsRead(t *testing.T) {
	defer func(a, b int64) { minChunk, initialChunk = a, b }(minChunk, initialChunk)
	minChunk, initialChunk = 2<<10, 5<<10
	dir := t.TempDir()
	long := "      x-1 [000] .... 1.000000: sched_waking: comm=" + strings.Repeat("y", 9000) + " pid=2 prio=120 target_cpu=000\n"
	inputs := map[string][]byte{
		// a line longer than a chunk is split, in both paths; the last line has no newline
		"long": []byte("      x-1 [000] .... 0.500000: sched_waking: comm=a pid=3 prio=120 target_cpu=000\n" + long + long[:60]),
	}
	for _, tr := range textTraces {
		inputs[filepath.Base(tr.path)] = readText(t, shareddata.Path(t, tr.path))
	}
	for name, text := range inputs {
		plain := filepath.Join(dir, name+".plain")
		gz := filepath.Join(dir, name+".gz")
		if err := os.WriteFile(plain, text, 0o644); err != nil {
			t.Fatal(err)
		}
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		zw.Write(text)
		zw.Close()
		if err := os.WriteFile(gz, zb.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		sm, rm := importRows(t, FormatAuto, plain)
		sg, rg := importRows(t, FormatAuto, gz)
		sm.Files, sg.Files = nil, nil
		jm, _ := json.Marshal(sm)
		jg, _ := json.Marshal(sg)
		if !bytes.Equal(jm, jg) {
			t.Errorf("%s: summaries differ:\nmapped %s\nread   %s", name, jm, jg)
		}
		if !reflect.DeepEqual(rm, rg) {
			t.Errorf("%s: rows differ (%d mapped, %d read)", name, len(rm), len(rg))
		}
		if len(rm) == 0 {
			t.Errorf("%s: no rows", name)
		}
	}
}
