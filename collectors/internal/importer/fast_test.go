package importer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"placemap/collectors/internal/shareddata"
)

// colsDiff describes the first difference between two finished cols, "" if none.
func colsDiff(a, b *cols) string {
	if a.n != b.n {
		return fmt.Sprintf("rows %d vs %d", a.n, b.n)
	}
	n := a.n
	bm := (n + 7) / 8
	if !reflect.DeepEqual(a.ts[:n], b.ts[:n]) || !reflect.DeepEqual(a.cpu[:n], b.cpu[:n]) ||
		!bytes.Equal(a.kind[:n], b.kind[:n]) || !reflect.DeepEqual(a.curPid[:n], b.curPid[:n]) ||
		!reflect.DeepEqual(a.pid[:n], b.pid[:n]) || !reflect.DeepEqual(a.lost[:n], b.lost[:n]) ||
		!bytes.Equal(a.lostValid[:bm], b.lostValid[:bm]) || a.lostSet != b.lostSet ||
		!reflect.DeepEqual(a.pendingTs, b.pendingTs) {
		return "fixed columns differ"
	}
	ia := []*i32n{&a.tgid, &a.prio, &a.target, &a.orig, &a.dest, &a.nextPid, &a.nextPrio, &a.childPid, &a.oldPid}
	ib := []*i32n{&b.tgid, &b.prio, &b.target, &b.orig, &b.dest, &b.nextPid, &b.nextPrio, &b.childPid, &b.oldPid}
	for i := range ia {
		if !reflect.DeepEqual(ia[i].v[:n], ib[i].v[:n]) || !bytes.Equal(ia[i].valid[:bm], ib[i].valid[:bm]) || ia[i].set != ib[i].set {
			return fmt.Sprintf("int column %d differs", i)
		}
	}
	sa := []*strn{&a.comm, &a.prevState, &a.nextComm, &a.childComm, &a.filename}
	sb := []*strn{&b.comm, &b.prevState, &b.nextComm, &b.childComm, &b.filename}
	for i := range sa {
		if !reflect.DeepEqual(sa[i].off[:n+1], sb[i].off[:n+1]) || !bytes.Equal(sa[i].data, sb[i].data) ||
			!bytes.Equal(sa[i].valid[:bm], sb[i].valid[:bm]) || sa[i].set != sb[i].set {
			return fmt.Sprintf("string column %d differs: %q vs %q", i, sa[i].data, sb[i].data)
		}
	}
	return ""
}

// checkFast runs line through fastLine (followed by end, as in a chunk) and, when the
// fast path takes it, through the general parser, and fails unless both give the same
// row and statistics.
func checkFast(t *testing.T, line []byte, end string, cpuLimit int32, tracecmd bool) bool {
	t.Helper()
	// what follows in the chunk: digits, spaces and dashes, which no scan may take
	buf := append(append(append([]byte(nil), line...), end...), strings.Repeat("7 -", 100)...)
	fc := newCols()
	fc.reset(4)
	var fst stats
	if !fastLine(buf, len(line), cpuLimit, &fst, fc) {
		return false
	}
	gc := newCols()
	gc.reset(4)
	var gst stats
	hl := int64(0)
	reason, ann := (&worker{}).line(line, false, tracecmd, cpuLimit, &gst, gc, &hl)
	if reason >= 0 || ann {
		t.Fatalf("%q: fast path took a line the general parser skips (%d) or annotates (%v)", line, reason, ann)
	}
	fc.finish()
	gc.finish()
	if d := colsDiff(fc, gc); d != "" {
		t.Fatalf("%q: fast and general rows differ: %s", line, d)
	}
	if fst != gst {
		t.Fatalf("%q: fast and general statistics differ:\n%+v\n%+v", line, fst, gst)
	}
	return true
}

// hostileFastLines put hostile comms (spaces, `=`, digits, dashes, brackets, text that
// looks like the next field) into the TASK column and every comm field of the forms the
// fast path takes, plus near misses of each fixed part.
func hostileFastLines() []string {
	comms := []string{"bash", "x pid=1 prio=1", "npm exec json2t", "a-1 [2] x", "<script>", "a=b c", "-", "a -1 [0] 1.0: x",
		"x prev_pid=1 pre", " next_pid=2 n", "q ==> next_comm", "abc def ghi jkl", "tab\there", "15-bytes-comm-x", "a b", "7", "[000]", "x-", ""}
	var out []string
	for _, c := range comms {
		for _, task := range []string{c, "task"} {
			pre := fmt.Sprintf("%16s-%d     [%03d] d..2.   %d.%06d: ", task, 4242, 1, 319, 954263)
			out = append(out,
				pre+"sched_switch: prev_comm="+c+" prev_pid=13093 prev_prio=120 prev_state=R ==> next_comm="+c+" next_pid=13114 next_prio=120",
				pre+"sched_switch: prev_comm="+c+" prev_pid=1 prev_prio=120 prev_state=R+ next_comm="+c+" next_pid=2 next_prio=120",
				pre+"sched_waking: comm="+c+" pid=15 prio=120 target_cpu=000",
				pre+"sched_wakeup: comm="+c+" pid=15 prio=120 success=1 target_cpu=001",
				pre+"sched_wakeup_new: comm="+c+" pid=15 prio=120 target_cpu=001",
				pre+"sched_wakeup: comm="+c+" pid=15 prio=120",
				pre+"sched_migrate_task: comm="+c+" pid=13114 prio=120 orig_cpu=1 dest_cpu=0",
			)
		}
	}
	base := "       hackbench-13113   [000] d..2.   319.954103: sched_wakeup_new: comm=hackbench pid=13114 prio=120 target_cpu=001"
	sw := "            bash-13109   [000] d..2.   319.952523: sched_switch: prev_comm=bash prev_pid=13109 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=13113 next_prio=120"
	out = append(out, base, sw,
		strings.Replace(base, "[000] d..2.", "[000]", 1),                       // irq-info off
		strings.Replace(base, "[000] d..2.", "[000] d..2.x.x.", 1),             // long flags
		strings.Replace(base, "[000] d..2.", "[000] dnfh2.123", 1),             // 9-byte flags
		strings.Replace(base, "-13113   [000]", "-13113   (  13100) [000]", 1), // record-tgid
		strings.Replace(base, "-13113   [000]", "-13113   (-------) [000]", 1),
		strings.Replace(base, "-13113   [000]", "-13113   ( 1x) [000]", 1),
		strings.Replace(base, "-13113   [000]", "-13113   () [000]", 1),
		strings.Replace(base, "319.954103", "319954103123", 1),            // counter clock
		strings.Replace(base, "319.954103", "319.954103123", 1),           // ns
		strings.Replace(base, "319.954103", "319.9541031234", 1),          // 10 fraction digits
		strings.Replace(base, "319.954103", "12345678901.954103", 1),      // long secs
		strings.Replace(base, "319.954103", "9223372036.954103", 1),       // secs at the bound
		strings.Replace(base, "319.954103", "1234567890123456789", 1),     // 19 digits
		strings.Replace(base, "319.954103:", "319.954103 :", 1),           // space before colon
		strings.Replace(base, "319.954103:", "319.:", 1),                  // no fraction
		strings.Replace(base, "prio=120", "prio=-1", 1),                   // negative prio
		strings.Replace(base, "pid=13114", "pid=12345678", 1),             // long pid
		strings.Replace(base, "-13113 ", "-2147483648 ", 1),               // pid out of range
		strings.Replace(base, "target_cpu=001", "target_cpu=001 *LLC", 1), // annotation
		strings.Replace(base, "target_cpu=001", "target_cpu=001 ", 1),
		strings.Replace(base, "target_cpu=001", "target_cpu=9", 1), // out of range for 2 CPUs
		strings.Replace(base, "[000]", "[005]", 1),
		strings.Replace(base, "comm=hackbench", "comm=h\xc3\xa9ckbench", 1), // not ASCII
		strings.Replace(base, "comm=hackbench", "comm=h\xffckbench", 1),
		strings.Replace(base, "sched_wakeup_new:", "sched_wakeup_new:\t", 1),
		strings.Replace(base, "sched_wakeup_new:", "sched_wakeup_news:", 1),
		strings.Replace(base, " prio=120", " prio=120x", 1),
		strings.Replace(base, " prio=120", " prio=120 success=1x", 1),
		strings.Replace(sw, "prev_state=S", "prev_state=", 1),
		strings.Replace(sw, "prev_state=S", "prev_state=R+|D|W|X|Z", 1),
		strings.Replace(sw, " ==>", "", 1),
		strings.Replace(sw, " ==>", " =>", 1),
		strings.Replace(sw, "next_prio=120", "next_prio=120\t", 1),
		strings.Replace(sw, "prev_comm=bash", "prev_comm=b\xe9sh", 1),
		"CPU:1 [LOST 20 EVENTS]",
		"                                                                                        ",
		strings.Replace(base, "       hackbench", "Lhackbench", 1),
		strings.Replace(base, "       hackbench", "version = 6", 1),
		"cpus=2 "+base,
	)
	return out
}

func TestFastLineMatchesGeneral(t *testing.T) {
	took := 0
	for _, l := range hostileFastLines() {
		for _, end := range []string{"\n        ", "\r\n       ", "\n"} {
			for _, lim := range []int32{maxCPU, 1} {
				for _, tc := range []bool{false, true} {
					if checkFast(t, []byte(l), end, lim, tc) {
						took++
					}
				}
			}
		}
	}
	if took < 100 {
		t.Fatalf("the fast path took only %d hostile lines", took)
	}
}

// TestFastParseEqualsGeneral: every text trace parsed as chunks with the fast path on
// and off gives the same rows and statistics.
func TestFastParseEqualsGeneral(t *testing.T) {
	defer func(v bool) { useFast = v }(useFast)
	for _, tr := range textTraces {
		data := readText(t, shareddata.Path(t, tr.path))
		format := tr.format
		ck := &chunk{data: data, format: format, lastOfFile: true, headerLost: 3}
		get := func(rows int) *cols { c := newCols(); c.reset(rows); return c }
		useFast = true
		fr := (&worker{}).parse(ck, get)
		useFast = false
		gr := (&worker{}).parse(ck, get)
		if fr.st != gr.st {
			t.Fatalf("%s: statistics differ", tr.path)
		}
		if len(fr.batch) != len(gr.batch) {
			t.Fatalf("%s: %d vs %d batches", tr.path, len(fr.batch), len(gr.batch))
		}
		for i := range fr.batch {
			fr.batch[i].finish()
			gr.batch[i].finish()
			if d := colsDiff(fr.batch[i], gr.batch[i]); d != "" {
				t.Fatalf("%s: batch %d: %s", tr.path, i, d)
			}
		}
		fast := 0
		for _, l := range bytes.Split(data, []byte{'\n'}) {
			if checkFast(t, bytes.TrimSuffix(l, []byte{'\r'}), "\n        ", maxCPU, format == FormatTracecmd) {
				fast++
			}
		}
		t.Logf("%s: %d lines on the fast path", tr.path, fast)
	}
}

// FuzzFastLineMatchesGeneral: for any line, and any comm put into the forms the fast
// path takes, the fast path either declines or gives the general parser's row.
func FuzzFastLineMatchesGeneral(f *testing.F) {
	for _, l := range hostileFastLines() {
		f.Add([]byte(l), []byte("x pid=1 prio=1"))
	}
	for _, l := range seedLines {
		f.Add([]byte(l), []byte("a-1 [2] x"))
	}
	f.Fuzz(func(t *testing.T, line, comm []byte) {
		line = bytes.ReplaceAll(line, []byte("\n"), nil)
		checkFast(t, line, "\n        ", maxCPU, false)
		checkFast(t, line, "\r\n       ", 1, true)
		if len(comm) > maxComm || bytes.IndexByte(comm, '\n') >= 0 {
			return
		}
		cs := string(comm)
		for _, l := range []string{
			"  " + cs + "-1 [000] d..2. 1.000001: sched_waking: comm=" + cs + " pid=5 prio=120 target_cpu=001",
			"  " + cs + "-1 [000] d..2. 1.000001: sched_switch: prev_comm=" + cs + " prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=" + cs + " next_pid=6 next_prio=120",
			"  " + cs + "-1 (  1) [000] 1.000001: sched_migrate_task: comm=" + cs + " pid=5 prio=120 orig_cpu=0 dest_cpu=1",
		} {
			checkFast(t, []byte(l), "\n        ", maxCPU, false)
		}
	})
}

// TestLineNumbersAcrossChunks: chunks are numbered by the consumer from the lines each
// parser counted, so skipped and annotated line numbers, and the line total, are the
// same whether a file is one chunk or hundreds (with a line longer than a chunk, and
// text and gzip input).
func TestLineNumbersAcrossChunks(t *testing.T) {
	lines := strings.Split(string(readText(t, shareddata.Path(t, "traces/vm2-hackbench-g4.ftrace.txt.gz"))), "\n")
	var b strings.Builder
	for i, l := range lines[:20000] {
		b.WriteString(l)
		switch {
		case i%997 == 500:
			b.WriteString("\nnot a trace line")
		case i%1499 == 700:
			b.WriteString(" *annotated")
		case i == 12345:
			b.WriteString("\n" + strings.Repeat("z", 12000)) // longer than a small chunk
		}
		b.WriteString("\n")
	}
	text := []byte(b.String())
	summaryOf := func(name string, data []byte) string {
		s, _ := importRows(t, FormatAuto, writeFile(t, name, data))
		s.Files = nil
		j, _ := json.Marshal(s)
		return string(j)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(text)
	zw.Close()
	whole := summaryOf("one.txt", text)
	if !strings.Contains(whole, `"annotation":{"count":21,"first_lines":[502,1500,2498,3496,4494]}`) {
		t.Fatalf("one chunk: %s", whole)
	}
	defer func(a, b int64) { minChunk, initialChunk = a, b }(minChunk, initialChunk)
	minChunk, initialChunk = 2<<10, 5<<10
	for name, data := range map[string][]byte{"many.txt": text, "many.txt.gz": zb.Bytes()} {
		if got := summaryOf(name, data); got != whole {
			t.Errorf("%s in small chunks:\n%s\none chunk:\n%s", name, got, whole)
		}
	}
}
