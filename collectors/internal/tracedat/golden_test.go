package tracedat_test

import (
	"reflect"
	"runtime"
	"sync"
	"testing"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/shareddata"
	"placemap/collectors/internal/tracedat"
	"placemap/collectors/internal/tracefs"
	"placemap/collectors/internal/tracefs/fttext"
)

var (
	textMu    sync.Mutex
	textCache = map[string][]fttext.Line{}
)

// readText parses a text trace once per test binary (the reports are large).
func readText(t *testing.T, path string) []fttext.Line {
	t.Helper()
	textMu.Lock()
	defer textMu.Unlock()
	if l, ok := textCache[path]; ok {
		return l
	}
	l, err := fttext.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	textCache[path] = l
	return l
}

func decode(t *testing.T, f *tracedat.File, instance string) ([]tracefs.Event, *tracefs.Result) {
	t.Helper()
	var evs []tracefs.Event
	res, err := f.Decode(tracefs.SinkFunc(func(ev *tracefs.Event) error {
		evs = append(evs, *ev)
		return nil
	}), tracedat.DecodeOptions{Instance: instance})
	if err != nil {
		t.Fatal(err)
	}
	return evs, res
}

// switchFlags is the kernel's prev_state table from the file's own sched_switch format.
func switchFlags(t *testing.T, f *tracedat.File) []tracefs.StateFlag {
	for _, ef := range f.Formats {
		if ef.Name == "sched_switch" {
			s, err := tracefs.NewStateFormatter(ef.PrintFmt)
			if err != nil {
				t.Fatal(err)
			}
			return s.Flags()
		}
	}
	t.Fatal("no sched_switch format")
	return nil
}

// compareReport checks the decoded events of one buffer against the report lines of
// that buffer: counts per tracepoint, then every modelled event field by field, in order.
func compareReport(t *testing.T, evs []tracefs.Event, res *tracefs.Result, lines []fttext.Line, o fttext.Options, wantOther int) {
	t.Helper()
	var modelled []*fttext.Line
	other := 0
	for i := range lines {
		if _, ok := fttext.KindOf[lines[i].Event]; ok {
			modelled = append(modelled, &lines[i])
		} else {
			other++
		}
	}
	byKind := map[string]int{}
	for _, l := range modelled {
		byKind[fttext.KindOf[l.Event]]++
	}
	for k, n := range res.Stats.EventsByKind {
		if n != byKind[schema.KindNames[k]] {
			t.Errorf("%s: decoded %d, report has %d", schema.KindNames[k], n, byKind[schema.KindNames[k]])
		}
	}
	if other != wantOther || res.Stats.Skipped[tracefs.SkipOtherEvent] != other || res.Stats.SkippedTotal() != other {
		t.Errorf("report has %d other events (want %d); decoder skipped %v", other, wantOther, res.Stats.Skipped)
	}
	if len(evs) != len(modelled) {
		t.Fatalf("decoded %d events, report has %d", len(evs), len(modelled))
	}
	bad := 0
	for i := range evs {
		if d := fttext.Diff(&evs[i], modelled[i], o); d != "" {
			bad++
			if bad <= 10 {
				t.Errorf("event %d: %s", i, d)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d events differ from the report", bad, len(evs))
	}
}

func filterBuffer(lines []fttext.Line, buffer string) []fttext.Line {
	var out []fttext.Line
	for _, l := range lines {
		if l.Buffer == buffer {
			out = append(out, l)
		}
	}
	return out
}

func TestMixedV7TopBufferMatchesReport(t *testing.T) {
	f, err := tracedat.Open(shareddata.Path(t, "traces", "vm2-hackbench-mixed.trace.dat"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 7 || f.Compression != "zstd" || f.NrCPUs != 2 || f.Clock != "local" {
		t.Errorf("header: version %d compression %q cpus %d clock %q", f.Version, f.Compression, f.NrCPUs, f.Clock)
	}
	if got := f.BufferNames(); len(got) != 2 || got[0] != "top" || got[1] != "capture" {
		t.Fatalf("buffers %v, want [top capture]", got)
	}
	if f.Buffers[0].PageSize != 4096 || f.Buffers[1].Clock != "local" {
		t.Errorf("buffer facts: %+v", f.Buffers[1])
	}
	lines := readText(t, shareddata.Path(t, "traces", "vm2-hackbench-mixed.tracecmd-report.txt.gz"))
	evs, res := decode(t, f, "top")
	compareReport(t, evs, res, filterBuffer(lines, ""), fttext.Options{TraceCmdFlags: switchFlags(t, f)}, 0)
}

// The capture instance is the buffer `cat instances/capture/trace` printed as
// vm2-hackbench-g4.ftrace.txt.gz: compare with the kernel's own text.
func TestMixedV7CaptureInstanceMatchesKernelText(t *testing.T) {
	f, err := tracedat.Open(shareddata.Path(t, "traces", "vm2-hackbench-mixed.trace.dat"))
	if err != nil {
		t.Fatal(err)
	}
	evs, res := decode(t, f, "capture")
	kernel := readText(t, shareddata.Path(t, "traces", "vm2-hackbench-g4.ftrace.txt.gz"))
	if len(kernel) != 72578 {
		t.Fatalf("kernel text: %d lines", len(kernel))
	}
	compareReport(t, evs, res, kernel, fttext.Options{}, 0)
	if res.Stats.EventsByKind[schema.KindMigrate] != 629 {
		t.Errorf("%d migrations, README says 629", res.Stats.EventsByKind[schema.KindMigrate])
	}
	// ... and with trace-cmd's report of the same instance.
	lines := readText(t, shareddata.Path(t, "traces", "vm2-hackbench-mixed.tracecmd-report.txt.gz"))
	compareReport(t, evs, res, filterBuffer(lines, "capture"), fttext.Options{TraceCmdFlags: switchFlags(t, f)}, 0)
}

func TestMixedAllBuffersMerged(t *testing.T) {
	f, err := tracedat.Open(shareddata.Path(t, "traces", "vm2-hackbench-mixed.trace.dat"))
	if err != nil {
		t.Fatal(err)
	}
	evs, res := decode(t, f, "")
	if len(evs) != 25651+72578 || len(res.Buffers) != 2 {
		t.Fatalf("%d events from %v", len(evs), res.Buffers)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].TsNs < evs[i-1].TsNs {
			t.Fatalf("event %d goes back in time", i)
		}
	}
	if _, err := f.Decode(tracefs.SinkFunc(func(*tracefs.Event) error { return nil }), tracedat.DecodeOptions{Instance: "nope"}); err == nil {
		t.Error("unknown instance accepted")
	}
}

func TestLisaV6MatchesReport(t *testing.T) {
	f, err := tracedat.Open(shareddata.Path(t, "traces", "external", "lisa", "sched_load", "trace.dat"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 6 || f.NrCPUs != 6 {
		t.Errorf("version %d cpus %d", f.Version, f.NrCPUs)
	}
	lines := readText(t, shareddata.Path(t, "traces", "external", "lisa", "sched_load", "trace.dat.trace-cmd-report.txt"))
	evs, res := decode(t, f, "")
	// 2437 sched_load_cfs_rq + 474 cpu_idle + 364 sched_load_se + 16 cpu_frequency + 6 print
	compareReport(t, evs, res, lines, fttext.Options{TraceCmdFlags: switchFlags(t, f)}, 3297)
}

func TestTrappyV6MatchesReport(t *testing.T) {
	f, err := tracedat.Open(shareddata.Path(t, "traces", "external", "trappy", "raw_trace.dat"))
	if err != nil {
		t.Fatal(err)
	}
	lines := readText(t, shareddata.Path(t, "traces", "external", "trappy", "raw_trace.dat.trace-cmd-report.txt"))
	evs, res := decode(t, f, "")
	compareReport(t, evs, res, lines, fttext.Options{TraceCmdFlags: switchFlags(t, f)}, 2)
	if res.Stats.EventsByKind[schema.KindSwitch] != 755 {
		t.Errorf("%d switches", res.Stats.EventsByKind[schema.KindSwitch])
	}
}

// DecodeWith maps the file (internal/mapfile) and releases it before it returns: the events and
// the result are the ones the parsed file gives (Open reads it onto the heap), and none of their
// strings points into the released mapping (comparing them reads every byte).
func TestDecodeFromTheMappedFileKeepsNothingOfIt(t *testing.T) {
	path := shareddata.Path(t, "traces", "vm2-hackbench-mixed.trace.dat")
	f, err := tracedat.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []tracefs.Event
	wantRes, err := f.Decode(tracefs.SinkFunc(func(ev *tracefs.Event) error { want = append(want, *ev); return nil }), tracedat.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tracedat.DecodeWith(path, tracefs.SinkFunc(func(ev *tracefs.Event) error { got = append(got, *ev); return nil }), tracedat.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	if len(got) < 90_000 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d events, %d from the file read whole, or they differ", len(got), len(want))
	}
	if !reflect.DeepEqual(res, wantRes) {
		t.Fatalf("result %+v, from the file read whole %+v", res, wantRes)
	}
}
