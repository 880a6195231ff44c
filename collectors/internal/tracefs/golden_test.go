package tracefs_test

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/shareddata"
	"placemap/collectors/internal/tracefs"
	"placemap/collectors/internal/tracefs/fttext"
)

// collect decodes into a slice (events are copied: the sink's *Event is reused).
func collect(t testing.TB, dec func(tracefs.Sink) (*tracefs.Result, error)) ([]tracefs.Event, *tracefs.Result) {
	t.Helper()
	var evs []tracefs.Event
	res, err := dec(tracefs.SinkFunc(func(ev *tracefs.Event) error {
		evs = append(evs, *ev)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return evs, res
}

// readStats parses the capture's stats.txt: per-CPU blocks of "key: value" lines.
func readStats(t *testing.T, path string) []map[string]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []map[string]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if k == "entries" {
			out = append(out, map[string]string{})
		}
		if len(out) > 0 {
			out[len(out)-1][k] = strings.TrimSpace(v)
		}
	}
	return out
}

// switchChains counts, per CPU, sched_switch links where the prev task is the previous
// switch's next task, and the links where it is not. A wrong offset, timestamp or merge
// breaks many links; the kernel itself leaves a few (the raw capture's text has 67 of
// 6512 idle->new-task switches missing, identically in text and binary).
func switchChains(evs []tracefs.Event) (links, broken int) {
	last := map[int32]int32{}
	for i := range evs {
		e := &evs[i]
		if e.Kind != schema.KindSwitch {
			continue
		}
		if p, ok := last[e.CPU]; ok {
			links++
			if p != e.Pid {
				broken++
			}
		}
		last[e.CPU] = e.NextPid
	}
	return links, broken
}

func TestRawCaptureMatchesKernelText(t *testing.T) {
	dir := shareddata.Path(t, "traces", "vm2-hackbench-threads.tracefs-raw")
	evs, res := collect(t, func(s tracefs.Sink) (*tracefs.Result, error) { return tracefs.DecodeDir(dir, s) })
	lines, err := fttext.ReadFile(filepath.Join(dir, "trace.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 16396 || len(evs) != 16396 {
		t.Fatalf("decoded %d events, text has %d lines; both must be 16396", len(evs), len(lines))
	}
	bad := 0
	for i := range evs {
		if d := fttext.Diff(&evs[i], &lines[i], fttext.Options{}); d != "" {
			bad++
			if bad <= 10 {
				t.Errorf("event %d: %s", i, d)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d events differ from the kernel's text", bad, len(evs))
	}
	want := map[schema.Kind]int{schema.KindSwitch: 6514, schema.KindWaking: 4739, schema.KindWakeup: 4739,
		schema.KindMigrate: 161, schema.KindWakeupNew: 81, schema.KindFork: 81, schema.KindExit: 81}
	for k, n := range want {
		if got := res.Stats.EventsByKind[k]; got != n {
			t.Errorf("%s: %d events, want %d", schema.KindNames[k], got, n)
		}
	}
	// The kernel's own per-CPU counters for the same buffer.
	st := readStats(t, filepath.Join(dir, "stats.txt"))
	if len(st) != 2 {
		t.Fatalf("stats.txt: %d CPU blocks", len(st))
	}
	b, _ := os.ReadFile(filepath.Join(dir, "stats.txt"))
	if ps := tracefs.ParseStats(string(b)); len(ps) != 2 || ps[0].Entries != 8609 || ps[1].Entries != 7787 || ps[1].Bytes != 362116 {
		t.Errorf("ParseStats: %+v", ps)
	}
	if res.Header["kernel_overrun"] != int64(0) || res.Header["kernel_dropped"] != int64(0) {
		t.Errorf("header %v", res.Header)
	}
	for cpu, m := range st {
		entries, _ := strconv.Atoi(m["entries"])
		overrun, _ := strconv.Atoi(m["overrun"])
		if got := res.Stats.Records[int32(cpu)]; got != entries {
			t.Errorf("cpu %d: %d records decoded, kernel says entries %d", cpu, got, entries)
		}
		if overrun != 0 || res.Stats.LostEvents != 0 || res.Stats.LostUnknown != 0 || res.Stats.EventsByKind[schema.KindLost] != 0 {
			t.Errorf("cpu %d: overrun %d, lost %d/%d", cpu, overrun, res.Stats.LostEvents, res.Stats.LostUnknown)
		}
	}
	if res.Stats.SkippedTotal() != 0 || len(res.Stats.Warnings) != 0 || res.Stats.OutOfOrder != 0 {
		t.Errorf("skipped %v, warnings %v, out of order %d", res.Stats.Skipped, res.Stats.Warnings, res.Stats.OutOfOrder)
	}
	if res.NrCPUs != 2 || res.KernelRelease != "6.18.44-fc-v657" || !res.HaveTimes || res.TStart != evs[0].TsNs || res.TEnd != evs[len(evs)-1].TsNs {
		t.Errorf("result facts: %+v", res)
	}
	sum := res.Summary([]string{dir})
	if sum.Format != schema.ImportSummaryFormatTracefsRaw || sum.EventsTotal != 16396 || sum.EventsByKind["switch"] != 6514 ||
		len(sum.CpusSeen) != 2 || sum.CpusSeen[1] != 1 || sum.SkippedTotal != 0 || sum.LostEvents != 0 || *sum.NrCpus != 2 ||
		*sum.TStartNS != int(evs[0].TsNs) || *sum.TEndNS != int(evs[len(evs)-1].TsNs) || sum.LinesTotal != 0 {
		t.Errorf("summary: %+v", sum)
	}
	if links, broken := switchChains(evs); links != 6512 || broken != 67 {
		t.Errorf("switch chain: %d links, %d broken (the text has 6512, 67)", links, broken)
	}
}

// untar unpacks a .tar.gz into dir (regular files and directories only).
func untar(t *testing.T, src, dir string) {
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			t.Fatalf("tar entry %q escapes", h.Name)
		}
		p := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestSchedVizCapture(t *testing.T) {
	dir := t.TempDir()
	untar(t, shareddata.Path(t, "traces", "external", "schedviz", "test.tar.gz"), dir)
	if !tracefs.IsCaptureDir(dir) {
		t.Fatal("SchedViz layout (traces/cpuN + formats/) not recognised")
	}
	evs, res := collect(t, func(s tracefs.Sink) (*tracefs.Result, error) { return tracefs.DecodeDir(dir, s) })
	t.Logf("schedviz: %d events %v skipped %v records %v pages %d warnings %v", len(evs), res.Stats.EventsByKind, res.Stats.Skipped, res.Stats.Records, res.Stats.Pages, res.Stats.Warnings)
	if res.Stats.Skipped[tracefs.SkipBadPage] != 0 || res.Stats.Skipped[tracefs.SkipMalformed] != 0 || res.Stats.Skipped[tracefs.SkipBadFormat] != 0 {
		t.Errorf("bad pages or records: %v %v", res.Stats.Skipped, res.Stats.Warnings)
	}
	if res.Stats.Pages != 1654784/4096 {
		t.Errorf("%d pages", res.Stats.Pages)
	}
	if len(evs) == 0 || res.Stats.EventsByKind[schema.KindSwitch] == 0 || res.Stats.EventsByKind[schema.KindWakeup] == 0 {
		t.Fatalf("too little decoded: %v", res.Stats.EventsByKind)
	}
	for i := range evs {
		e := &evs[i]
		if e.CPU != 0 || e.Kind != schema.KindLost && e.Comm == "" && e.Pid != 0 {
			t.Fatalf("event %d: %+v", i, *e)
		}
		if i > 0 && e.TsNs < evs[i-1].TsNs {
			t.Fatalf("event %d goes back in time", i)
		}
		if e.Kind == schema.KindSwitch && (e.PrevState == "" || e.PrevState[0] >= '0' && e.PrevState[0] <= '9') {
			t.Fatalf("prev_state %q not in the kernel's letter form", e.PrevState)
		}
	}
	if links, broken := switchChains(evs); links != res.Stats.EventsByKind[schema.KindSwitch]-1 || broken != 0 {
		t.Errorf("switch chain: %d links, %d broken", links, broken)
	}
	want := [10]int{schema.KindWakeupNew: 2732, schema.KindWakeup: 11134, schema.KindSwitch: 15056}
	if res.Stats.EventsByKind != want || res.Stats.Skipped[tracefs.SkipDiscarded] != 1 || res.Stats.Records[0] != 28922 {
		t.Errorf("counts %v skipped %v records %v", res.Stats.EventsByKind, res.Stats.Skipped, res.Stats.Records)
	}
}
