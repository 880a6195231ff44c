package perfdata_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"placemap/collectors/internal/importer"
	"placemap/collectors/internal/perfdata"
	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/shareddata"
	"placemap/collectors/internal/tracefs"
	"placemap/collectors/internal/tracefs/rawimport"
)

// columns reads an Arrow IPC file into one string per cell, column by column.
func columns(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	if !rd.Schema().Equal(schema.ArrowSchema) {
		t.Fatalf("schema %v", rd.Schema())
	}
	cols := make([][]string, len(schema.ArrowSchema.Fields()))
	for rd.Next() {
		rec := rd.RecordBatch()
		for c := range cols {
			a := rec.Column(c)
			for r := 0; r < a.Len(); r++ {
				v := "<null>"
				if !a.IsNull(r) {
					v = a.ValueStr(r)
				}
				cols[c] = append(cols[c], v)
			}
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return cols
}

// The perf.data and the `perf script` text printed from it (../shared/traces) give the same
// events, column by column, row by row: perf script prints microseconds, perf.data holds
// nanoseconds, so the times agree to the microsecond and are finer in perf.data.
func TestPerfDataIsItsPerfScript(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin.arrow")
	sum, err := rawimport.Run(rawimport.Options{Path: shareddata.Path(t, "traces", "vm2-hackbench-g2.perf.data"), Out: bin})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Format != schema.ImportSummaryFormatPerfdata || sum.EventsTotal != 9903 || sum.SkippedTotal != 0 || sum.LostEvents != 0 {
		t.Fatalf("summary %+v", sum)
	}
	// the same VM and kernel as the raw tracefs capture of ../shared/traces
	if sum.Header["kernel_release"] != "6.18.44-fc-v657" || sum.Header["hostname"] != "vm" || sum.Header["perf_version"] != "6.1.187" || sum.NrCpus == nil || *sum.NrCpus != 2 {
		t.Errorf("header %v, nr_cpus %v", sum.Header, sum.NrCpus)
	}
	text := filepath.Join(dir, "text.arrow")
	if _, err := importer.Run(importer.Options{Files: []string{shareddata.Path(t, "traces", "vm2-hackbench-g2.perf-script.txt.gz")}, Format: importer.FormatPerf, Out: text}); err != nil {
		t.Fatal(err)
	}
	got, want := columns(t, bin), columns(t, text)
	if len(got[0]) != 9903 || len(want[0]) != 9903 {
		t.Fatalf("rows: %d from perf.data, %d from perf script", len(got[0]), len(want[0]))
	}
	finer := 0
	for c, f := range schema.ArrowSchema.Fields() {
		for r := range want[c] {
			g := got[c][r]
			if f.Name == "ts_ns" {
				// 329561715739 ns in perf.data is 329561715000 in perf script's microseconds
				if g[len(g)-3:] != "000" {
					finer++
				}
				g = g[:len(g)-3] + "000"
			}
			if g != want[c][r] {
				t.Fatalf("row %d, %s: %q from perf.data, %q from perf script", r, f.Name, got[c][r], want[c][r])
			}
		}
	}
	if finer < 9000 {
		t.Errorf("only %d of 9903 timestamps finer than a microsecond: not perf.data's own clock?", finer)
	}
}

func TestDetectedByMagic(t *testing.T) {
	if got := rawimport.Detect(shareddata.Path(t, "traces", "vm2-hackbench-g2.perf.data")); got != rawimport.FormatPerfdata {
		t.Fatalf("detected %q", got)
	}
	if got := rawimport.Detect(shareddata.Path(t, "traces", "vm2-hackbench-g2.perf-script.txt.gz")); got != "" {
		t.Fatalf("text detected as %q", got)
	}
}

// A cut-short or corrupted file is a named error or a counted skip, never a panic, and what
// decoded before the damage is kept.
func TestHostilePerfData(t *testing.T) {
	b, err := os.ReadFile(shareddata.Path(t, "traces", "vm2-hackbench-g2.perf.data"))
	if err != nil {
		t.Fatal(err)
	}
	decode := func(img []byte) (int, *tracefs.Result, error) {
		f, err := perfdata.Parse(img)
		if err != nil {
			return 0, nil, err
		}
		n := 0
		res, err := f.Decode(tracefs.SinkFunc(func(*tracefs.Event) error { n++; return nil }))
		return n, res, err
	}
	if _, _, err := decode([]byte("PERFFILE")); !errors.Is(err, perfdata.ErrNotPerfData) {
		t.Errorf("wrong magic: %v", err)
	}
	if _, _, err := decode(b[:100]); !errors.Is(err, perfdata.ErrCorrupt) {
		t.Errorf("header cut short: %v", err)
	}
	// the feature sections sit after the data: a file cut inside its data has lost them
	if _, _, err := decode(b[:len(b)/2]); !errors.Is(err, perfdata.ErrCorrupt) {
		t.Errorf("cut in the data: %v", err)
	}
	// no tracing data feature: a perf.data of hardware events
	noTracing := bytes.Clone(b)
	noTracing[72] &^= 1 << 1
	if _, _, err := decode(noTracing); !errors.Is(err, perfdata.ErrNoTracingData) {
		t.Errorf("no tracing data: %v", err)
	}
	// a record whose size runs past the data: what came before it is kept, the rest counted
	data := int(leU64(b[40:]))
	bad := bytes.Clone(b)
	p := data
	for i := 0; i < 5000; i++ {
		p += int(leU16(bad[p+6:]))
	}
	bad[p+6], bad[p+7] = 0xff, 0xff
	n, res, err := decode(bad)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || n >= 9903 || res.Stats.Skipped[tracefs.SkipMalformed] != 1 || len(res.Stats.Warnings) == 0 {
		t.Errorf("damaged record: %d events, skipped %v, warnings %v", n, res.Stats.Skipped, res.Stats.Warnings)
	}
	// a PERF_RECORD_LOST becomes a lost row at its trailer's CPU and time: a COMM record the
	// kernel wrote during the run (after a sample; perf's synthesized ones at the start have
	// zeroed trailers) turned into a loss of 17 events
	lossy := bytes.Clone(b)
	q, at, sampled := data, -1, false
	for q < len(lossy) {
		switch leU32(lossy[q:]) {
		case 9: // PERF_RECORD_SAMPLE
			sampled = true
		case 3: // PERF_RECORD_COMM
			if sampled {
				at = q
			}
		}
		if at >= 0 {
			break
		}
		q += int(leU16(lossy[q+6:]))
	}
	if at < 0 {
		t.Fatal("no COMM record")
	}
	lossy[at] = 2
	copy(lossy[at+16:at+24], []byte{17, 0, 0, 0, 0, 0, 0, 0})
	f, err := perfdata.Parse(lossy)
	if err != nil {
		t.Fatal(err)
	}
	var lost []tracefs.Event
	res, err = f.Decode(tracefs.SinkFunc(func(ev *tracefs.Event) error {
		if ev.Kind == schema.KindLost {
			lost = append(lost, *ev)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	// the record's sample_id trailer: TID, TIME, CPU, IDENTIFIER (its attribute samples those)
	end := at + int(leU16(lossy[at+6:]))
	wantTime, wantCPU := int64(leU64(lossy[end-24:])), int32(leU32(lossy[end-16:]))
	if len(lost) != 1 || lost[0].LostEvents != 17 || lost[0].CPU != wantCPU || lost[0].TsNs != wantTime || res.Stats.LostEvents != 17 {
		t.Errorf("lost rows %+v (want cpu %d at %d), stats lost %d", lost, wantCPU, wantTime, res.Stats.LostEvents)
	}
	// the same file as perf writes it when every event samples alike (no IDENTIFIER: the id
	// among the fields, SAMPLE_ID): the same events and the same loss
	idLayout := toIDLayout(t, lossy)
	got, gotRes := decodeAll(t, idLayout)
	want, _ := decodeAll(t, lossy)
	if len(got) != 9904 || len(want) != 9904 || gotRes.Stats.LostEvents != 17 {
		t.Fatalf("ID layout: %d events, %d in the IDENTIFIER layout, lost %d", len(got), len(want), gotRes.Stats.LostEvents)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ID layout, event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// the CPUs: nr_cpus_avail (the highest present CPU + 1) comes first, nr_cpus_online second
	f2, err := perfdata.Parse(withNrCPUs(t, b, 4, 3))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := f2.Decode(tracefs.SinkFunc(func(*tracefs.Event) error { return nil })); err != nil || r.NrCPUs != 4 {
		t.Errorf("nr_cpus: %v, %v", r, err)
	}
	// a common_type declared 8 bytes wide whose value reads negative: counted, no panic
	wide := bytes.ReplaceAll(b, []byte("field:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;"),
		[]byte("field:unsigned long  common_type;\toffset:0;\tsize:8;\tsigned:0;"))
	q = data
	for leU32(wide[q:]) != 9 { // the first sample
		q += int(leU16(wide[q+6:]))
	}
	wide[q+8+6*8+4+7] = 0xff // its raw record's 8th byte: after IDENTIFIER IP TID TIME CPU PERIOD and the size
	if _, r, err := decode(wide); err != nil || r.Stats.Skipped[tracefs.SkipUnknownEvent] == 0 {
		t.Errorf("negative event id: %v, %v", r, err)
	}
	// attributes whose id sections add up to more than the file: refused at once
	many := bytes.Clone(b)
	attrs, attrSize := int(leU64(b[24:])), int(leU64(b[16:]))
	for a := attrs; a < attrs+int(leU64(b[32:])); a += attrSize {
		copy(many[a+attrSize-16:], b[40:56]) // every ids section: the whole data section
	}
	if _, _, err := decode(many); !errors.Is(err, perfdata.ErrCorrupt) {
		t.Errorf("id sections bigger than the file: %v", err)
	}
	// written to a pipe, or compressed: named, not read as nothing
	pipe := append([]byte(perfdata.Magic), 16, 0, 0, 0, 0, 0, 0, 0)
	if _, _, err := decode(append(pipe, b[16:200]...)); !errors.Is(err, perfdata.ErrPipeMode) {
		t.Errorf("pipe mode: %v", err)
	}
	for _, typ := range []byte{81, 83} { // PERF_RECORD_COMPRESSED, and COMPRESSED2 since 6.15
		zipped := bytes.Clone(b)
		zipped[data], zipped[data+1] = typ, 0
		if _, _, err := decode(zipped); !errors.Is(err, perfdata.ErrCompressed) {
			t.Errorf("compressed (%d): %v", typ, err)
		}
	}
	// every cut of the header and attribute area: an error, no panic
	for cut := 0; cut < 1200; cut += 7 {
		_, _, _ = decode(b[:cut])
	}
}

func leU64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func leU16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

func leU32(b []byte) uint32 { return uint32(leU16(b)) | uint32(leU16(b[2:]))<<16 }

// FuzzParse: any image parses and decodes or fails with an error, never a panic.
func FuzzParse(f *testing.F) {
	b, err := os.ReadFile(shareddata.Path(f, "traces", "vm2-hackbench-g2.perf.data"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, img []byte) {
		pf, err := perfdata.Parse(img)
		if err == nil {
			_, _ = pf.Decode(tracefs.SinkFunc(func(*tracefs.Event) error { return nil }))
		}
	})
}

// The perf.data decoder beside the text importer on the same 9,903 events (its perf script
// text, gzipped as shared): `scripts/bench perfdata`.
func BenchmarkPerfData(b *testing.B) {
	path := shareddata.Path(b, "traces", "vm2-hackbench-g2.perf.data")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		n := 0
		if _, err := perfdata.Decode(path, tracefs.SinkFunc(func(*tracefs.Event) error { n++; return nil })); err != nil || n != 9903 {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(9903*b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkPerfScriptText(b *testing.B) {
	path := shareddata.Path(b, "traces", "vm2-hackbench-g2.perf-script.txt.gz")
	out := filepath.Join(b.TempDir(), "x.arrow")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := importer.Run(importer.Options{Files: []string{path}, Format: importer.FormatPerf, Out: out}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(9903*b.N)/b.Elapsed().Seconds(), "events/s")
}

func decodeAll(t *testing.T, img []byte) ([]tracefs.Event, *tracefs.Result) {
	t.Helper()
	f, err := perfdata.Parse(img)
	if err != nil {
		t.Fatal(err)
	}
	var evs []tracefs.Event
	res, err := f.Decode(tracefs.SinkFunc(func(ev *tracefs.Event) error { evs = append(evs, *ev); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return evs, res
}

// toIDLayout rewrites the shared file's records as perf writes them without IDENTIFIER: each
// attribute samples ID instead, a sample's id moved after IP, TID and TIME, a trailer's from
// last to before CPU; the sizes stay.
func toIDLayout(t *testing.T, b []byte) []byte {
	t.Helper()
	n := bytes.Clone(b)
	attrs, attrSize := int(leU64(b[24:])), int(leU64(b[16:]))
	for a := attrs; a < attrs+int(leU64(b[32:])); a += attrSize {
		st := leU64(n[a+24:])&^(1<<16) | 1<<6
		putU64(n[a+24:], st)
	}
	data, end := int(leU64(b[40:])), int(leU64(b[40:])+leU64(b[48:]))
	for p := data; p < end; p += int(leU16(b[p+6:])) {
		typ, size := leU32(b[p:]), int(leU16(b[p+6:]))
		switch {
		case typ == 9: // IDENTIFIER IP TID TIME ... -> IP TID TIME ID ...
			copy(n[p+8:], b[p+16:p+40])
			copy(n[p+32:], b[p+8:p+16])
		case typ < 64 && typ != 68: // a kernel record's trailer: ... CPU IDENTIFIER -> ... ID CPU
			copy(n[p+size-16:], b[p+size-8:p+size])
			copy(n[p+size-8:], b[p+size-16:p+size-8])
		}
	}
	return n
}

func putU64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

// withNrCPUs sets the HEADER_NRCPUS feature's two counts.
func withNrCPUs(t *testing.T, b []byte, avail, online uint32) []byte {
	t.Helper()
	n := bytes.Clone(b)
	next := int(leU64(b[40:]) + leU64(b[48:]))
	for bit := 0; bit < 8; bit++ { // the sections of bits 0..7, in order
		if b[72]&(1<<bit) == 0 {
			continue
		}
		if bit == 7 {
			off := int(leU64(b[next:]))
			n[off], n[off+4] = byte(avail), byte(online)
			return n
		}
		next += 16
	}
	t.Fatal("no HEADER_NRCPUS")
	return nil
}

// Decode maps the file (internal/mapfile) and releases it before it returns: the events and the
// result are the ones the file read onto the heap gives, and none of their strings points into
// the released mapping (comparing them reads every byte; a string left in it would fault).
func TestDecodeFromTheMappedFileKeepsNothingOfIt(t *testing.T) {
	path := shareddata.Path(t, "traces", "vm2-hackbench-g2.perf.data")
	img, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, wantRes := decodeAll(t, img)
	var got []tracefs.Event
	res, err := perfdata.Decode(path, tracefs.SinkFunc(func(ev *tracefs.Event) error { got = append(got, *ev); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	if len(got) != 9903 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d events, %d from the file read whole, or they differ", len(got), len(want))
	}
	if !reflect.DeepEqual(res, wantRes) {
		t.Fatalf("result %+v, from the file read whole %+v", res, wantRes)
	}
}

// BenchmarkPerfDataReadWhole is the decode as it was before the file was mapped (read onto the
// heap, then parsed): BenchmarkPerfData's baseline, beside it in the same run (B/op).
func BenchmarkPerfDataReadWhole(b *testing.B) {
	path := shareddata.Path(b, "traces", "vm2-hackbench-g2.perf.data")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		img, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		f, err := perfdata.Parse(img)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if _, err := f.Decode(tracefs.SinkFunc(func(*tracefs.Event) error { n++; return nil })); err != nil || n != 9903 {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(9903*b.N)/b.Elapsed().Seconds(), "events/s")
}
