package tracefs_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/shareddata"
	"placemap/collectors/internal/tracefs"
)

// rawFormats loads the raw capture's real format files.
func rawFormats(t testing.TB) (tracefs.PageHeader, tracefs.EventHeader, []*tracefs.EventFormat) {
	t.Helper()
	ph, eh, fmts, warns, err := tracefs.LoadFormats(shareddata.Path(t, "traces", "vm2-hackbench-threads.tracefs-raw", "events"))
	if err != nil || len(warns) != 0 || len(fmts) != 7 {
		t.Fatalf("formats: %v %v %d", err, warns, len(fmts))
	}
	return ph, eh, fmts
}

func newDecoder(t testing.TB, fmts []*tracefs.EventFormat) *tracefs.Decoder {
	t.Helper()
	ph, eh, real := rawFormats(t)
	if fmts == nil {
		fmts = real
	}
	d, err := tracefs.NewDecoder(ph, eh, fmts, tracefs.Options{PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func formatByName(fmts []*tracefs.EventFormat, name string) *tracefs.EventFormat {
	for _, f := range fmts {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// record builds an event record from its format, setting fields by name (strings
// are written into char arrays; __data_loc strings are appended after the fixed part).
func record(t testing.TB, f *tracefs.EventFormat, vals map[string]any) []byte {
	t.Helper()
	size := 0
	for _, fd := range append(append([]tracefs.Field(nil), f.Common...), f.Fields...) {
		size = max(size, fd.Offset+fd.Size)
	}
	rec := make([]byte, size)
	binary.LittleEndian.PutUint16(rec, uint16(f.ID))
	for name, v := range vals {
		fd := f.Field(name)
		if fd == nil {
			t.Fatalf("%s has no field %s", f.Name, name)
		}
		switch x := v.(type) {
		case string:
			if fd.DataLoc {
				off := len(rec)
				rec = append(rec, x...)
				rec = append(rec, 0)
				binary.LittleEndian.PutUint32(rec[fd.Offset:], uint32(len(x)+1)<<16|uint32(off))
			} else {
				copy(rec[fd.Offset:fd.Offset+fd.Size], x)
			}
		case int:
			switch fd.Size {
			case 4:
				binary.LittleEndian.PutUint32(rec[fd.Offset:], uint32(x))
			case 8:
				binary.LittleEndian.PutUint64(rec[fd.Offset:], uint64(x))
			}
		}
	}
	for len(rec)%4 != 0 {
		rec = append(rec, 0)
	}
	return rec
}

// page assembles a 4096-byte ring-buffer page (64-bit commit, data at 16).
type page struct{ data []byte }

func (p *page) word(typeLen, delta uint32) { p.u32(delta<<5 | typeLen) }
func (p *page) u32(v uint32)               { p.data = binary.LittleEndian.AppendUint32(p.data, v) }

// event appends a data event: short form when it fits type_len 1..28, else type_len 0.
func (p *page) event(delta uint32, rec []byte) {
	if len(rec) <= 28*4 {
		p.word(uint32(len(rec)/4), delta)
	} else {
		p.word(0, delta)
		p.u32(uint32(len(rec) + 4))
	}
	p.data = append(p.data, rec...)
}

func (p *page) bytes(ts uint64, flags uint64) []byte {
	b := make([]byte, 4096)
	binary.LittleEndian.PutUint64(b, ts)
	binary.LittleEndian.PutUint64(b[8:], uint64(len(p.data))|flags)
	copy(b[16:], p.data)
	return b
}

func waking(t testing.TB, fmts []*tracefs.EventFormat, pid int) []byte {
	return record(t, formatByName(fmts, "sched_waking"), map[string]any{"common_pid": 7, "comm": "w", "pid": pid, "prio": 120, "target_cpu": 1})
}

func TestTimeExtendAbsoluteStampAndPadding(t *testing.T) {
	_, _, fmts := rawFormats(t)
	d := newDecoder(t, fmts)
	var p page
	p.event(5, waking(t, fmts, 1)) // 1000+5
	p.word(30, 3)                  // TIME_EXTEND: (2<<27)+3
	p.u32(2)
	p.event(0, waking(t, fmts, 2)) // 1005 + 2<<27 + 3
	p.word(29, 7)                  // discarded event: its delta is not added
	p.u32(12)                      // array[0] = length after the header word
	p.u32(0)
	p.u32(0)
	p.event(2, waking(t, fmts, 3)) // +2
	p.word(31, 5_000_000&(1<<27-1))
	p.u32(5_000_000 >> 27) // absolute 5,000,000
	p.event(1, waking(t, fmts, 4))
	// A long record (type_len 0 with array[0]): a fork with __data_loc strings.
	p.event(4, record(t, formatByName(fmts, "sched_process_fork"), map[string]any{"common_pid": 9, "parent_comm": "parent", "parent_pid": 9,
		"child_comm": strings.Repeat("c", 15), "child_pid": 10}))
	p.word(29, 0) // rest of page empty
	evs, err := d.DecodePage(p.bytes(1000, 0), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	ext := uint64(2)<<27 + 3
	want := []int64{1005, int64(1005 + ext), int64(1007 + ext), 5_000_001, 5_000_005}
	if len(evs) != len(want) {
		t.Fatalf("%d events: %+v", len(evs), evs)
	}
	for i, e := range evs {
		if e.TsNs != want[i] || e.CPU != 3 {
			t.Errorf("event %d: ts %d cpu %d, want %d", i, e.TsNs, e.CPU, want[i])
		}
	}
	if f := evs[4]; f.Kind != schema.KindFork || f.Comm != "parent" || f.ChildComm != strings.Repeat("c", 15) || f.ChildPid != 10 || f.CurPid != 9 {
		t.Errorf("fork: %+v", f)
	}
	if d.Stats.Skipped[tracefs.SkipDiscarded] != 1 {
		t.Errorf("skipped %v", d.Stats.Skipped)
	}
}

func TestMissedEventsBecomeLostRecords(t *testing.T) {
	_, _, fmts := rawFormats(t)
	d := newDecoder(t, fmts)
	var p page
	p.event(10, waking(t, fmts, 1))
	b := p.bytes(500, 1<<31|1<<30)
	binary.LittleEndian.PutUint64(b[16+len(p.data):], 1234) // the count after the data
	evs, err := d.DecodePage(b, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Kind != schema.KindLost || evs[0].LostEvents != 1234 || evs[0].TsNs != 500 || evs[1].TsNs != 510 {
		t.Fatalf("%+v", evs)
	}
	// Flagged without room for the count: a loss of unknown size.
	evs, err = d.DecodePage(p.bytes(600, 1<<31), 1, nil)
	if err != nil || len(evs) != 2 || evs[0].LostEvents != -1 || d.Stats.LostUnknown != 1 || d.Stats.LostEvents != 1234 {
		t.Fatalf("%v %+v %+v", err, evs, d.Stats)
	}
}

func TestHostilePages(t *testing.T) {
	_, _, fmts := rawFormats(t)
	d := newDecoder(t, fmts)
	var p page
	p.event(1, waking(t, fmts, 1))
	p.event(1, waking(t, fmts, 2))
	good := p.bytes(100, 0)

	if _, err := d.DecodePage(good[:10], 0, nil); !errors.Is(err, tracefs.ErrTruncatedPage) {
		t.Errorf("short header: %v", err)
	}
	if _, err := d.DecodePage(good[:40], 0, nil); !errors.Is(err, tracefs.ErrTruncatedPage) {
		t.Errorf("data cut before commit: %v", err)
	}
	big := append([]byte(nil), good...)
	binary.LittleEndian.PutUint64(big[8:], 5000)
	if _, err := d.DecodePage(big, 0, nil); !errors.Is(err, tracefs.ErrCommitTooLarge) {
		t.Errorf("commit 5000: %v", err)
	}
	// An event whose length runs past the commit: the events before it are kept.
	var q page
	q.event(1, waking(t, fmts, 1))
	q.word(0, 1)
	q.u32(4000)
	evs, err := d.DecodePage(q.bytes(0, 0), 0, nil)
	if !errors.Is(err, tracefs.ErrBadEvent) || len(evs) != 1 {
		t.Errorf("overlong event: %v, %d events", err, len(evs))
	}
	// An id no format describes, and a record too short for its format.
	var u page
	unk := waking(t, fmts, 1)
	binary.LittleEndian.PutUint16(unk, 9999)
	u.event(1, unk)
	u.event(1, waking(t, fmts, 1)[:16])
	u.event(1, waking(t, fmts, 5))
	evs, err = d.DecodePage(u.bytes(0, 0), 0, nil)
	if err != nil || len(evs) != 1 || evs[0].Pid != 5 || d.Stats.Skipped[tracefs.SkipUnknownEvent] != 1 || d.Stats.Skipped[tracefs.SkipMalformed] != 1 {
		t.Errorf("%v %+v %v", err, evs, d.Stats.Skipped)
	}
	// A __data_loc pointing outside the record.
	var dl page
	rec := record(t, formatByName(fmts, "sched_migrate_task"), map[string]any{"comm": "m", "pid": 3, "orig_cpu": 0, "dest_cpu": 1})
	binary.LittleEndian.PutUint32(rec[8:], 200<<16|10)
	dl.event(1, rec)
	evs, err = d.DecodePage(dl.bytes(0, 0), 0, nil)
	if err != nil || len(evs) != 0 || d.Stats.Skipped[tracefs.SkipMalformed] != 2 {
		t.Errorf("bad __data_loc: %v %+v %v", err, evs, d.Stats.Skipped)
	}
}

func TestUnknownFieldTypeIsNamedAndCounted(t *testing.T) {
	_, _, fmts := rawFormats(t)
	sw := formatByName(fmts, "sched_switch")
	text := `name: sched_switch
ID: 372
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:char prev_comm[16];	offset:8;	size:16;	signed:0;
	field:struct pid_ns prev_pid;	offset:24;	size:12;	signed:0;
	field:long prev_state;	offset:36;	size:8;	signed:1;
	field:char next_comm[16];	offset:44;	size:16;	signed:0;
	field:pid_t next_pid;	offset:60;	size:4;	signed:1;

print fmt: "x"
`
	bad, err := tracefs.ParseEventFormat("sched", text)
	if err != nil {
		t.Fatal(err)
	}
	var with []*tracefs.EventFormat
	for _, f := range fmts {
		if f != sw {
			with = append(with, f)
		}
	}
	d := newDecoder(t, append(with, bad))
	if e := d.FormatErrors()["sched_switch"]; !errors.Is(e, tracefs.ErrFieldType) {
		t.Fatalf("format error %v", e)
	}
	var p page
	p.event(1, record(t, sw, map[string]any{"prev_comm": "a", "prev_pid": 1, "next_comm": "b", "next_pid": 2}))
	p.event(1, waking(t, fmts, 8))
	evs, err := d.DecodePage(p.bytes(0, 0), 0, nil)
	if err != nil || len(evs) != 1 || d.Stats.Skipped[tracefs.SkipBadFormat] != 1 {
		t.Errorf("%v %+v %v", err, evs, d.Stats.Skipped)
	}
	for _, in := range []string{"", "name: x\nID: zz\n", "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:q;\tsize:4;\n"} {
		if _, err := tracefs.ParseEventFormat("", in); !errors.Is(err, tracefs.ErrFormat) {
			t.Errorf("%q: %v", in, err)
		}
	}
	if _, err := tracefs.ParseHeaderEvent("\ttype_len    :    6 bits\n\ttime_delta  :   26 bits\n"); !errors.Is(err, tracefs.ErrHeaderEvent) {
		t.Errorf("6-bit type_len accepted: %v", err)
	}
	if _, err := tracefs.ParseHeaderPage("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"); !errors.Is(err, tracefs.ErrHeaderPage) {
		t.Errorf("header_page without commit accepted: %v", err)
	}
}

// A capture whose last page is cut short: a counted bad page, the rest kept.
func TestTruncatedCaptureFile(t *testing.T) {
	src := shareddata.Path(t, "traces", "vm2-hackbench-threads.tracefs-raw")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "events"), os.DirFS(filepath.Join(src, "events"))); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(src, "per_cpu", "cpu0.raw"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "per_cpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "per_cpu", "cpu0.raw"), raw[:3*4096+100], 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	res, err := tracefs.DecodeDir(dir, tracefs.SinkFunc(func(*tracefs.Event) error { n++; return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Skipped[tracefs.SkipBadPage] != 1 || len(res.Stats.Warnings) != 1 || n == 0 {
		t.Errorf("%d events, skipped %v, warnings %v", n, res.Stats.Skipped, res.Stats.Warnings)
	}
	if _, err := tracefs.DecodeDir(t.TempDir(), tracefs.SinkFunc(func(*tracefs.Event) error { return nil })); !errors.Is(err, tracefs.ErrNotCapture) {
		t.Errorf("empty dir: %v", err)
	}
}

func TestPrevStateLetters(t *testing.T) {
	_, _, fmts := rawFormats(t)
	s, err := tracefs.NewStateFormatter(formatByName(fmts, "sched_switch").PrintFmt)
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[int64]string{0: "R", 0x100: "R+", 1: "S", 2: "D", 4: "T", 8: "t", 0x10: "X", 0x20: "Z", 0x40: "P", 0x80: "I", 3: "S|D", 0x101: "S+", 0x200: "R"} {
		if got := s.Format(v); got != want {
			t.Errorf("6.18 state %#x: %q, want %q", v, got, want)
		}
	}
	old := `"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state & (4096-1) ? __print_flags(REC->prev_state & (4096-1), "|", { 1, "S"} , { 2, "D" }, { 4, "T" }, { 8, "t" }, { 16, "Z" }, { 32, "X" }, { 64, "x" }, { 128, "K" }, { 256, "W" }, { 512, "P" }, { 1024, "N" }) : "R", REC->prev_state & 4096 ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio`
	s, err = tracefs.NewStateFormatter(old)
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[int64]string{0: "R", 4096: "R+", 16: "Z", 32: "X", 64: "x", 130: "D|K", 1024: "N"} {
		if got := s.Format(v); got != want {
			t.Errorf("4.x state %d: %q, want %q", v, got, want)
		}
	}
	s, err = tracefs.NewStateFormatter(`"prev_state=%ld", REC->prev_state`)
	if err == nil || !s.Numeric || s.Format(64) != "64" {
		t.Errorf("numeric fallback: %v %v", err, s.Format(64))
	}
}

func TestCommEscaping(t *testing.T) {
	in := tracefs.NewInterner()
	if got := in.Bytes([]byte("ok\x00junk")); got != "ok" {
		t.Errorf("%q", got)
	}
	if got := in.Bytes([]byte("a\xffb\xc3")); got != `a\xffb\xc3` || in.Escaped != 1 {
		t.Errorf("%q %d", got, in.Escaped)
	}
	if got := in.Bytes([]byte("<script>é")); got != "<script>é" || in.Escaped != 1 {
		t.Errorf("%q", got)
	}
}

// Hostile task names come through the page decoder intact (escaped only where not UTF-8).
func TestHostileCommsThroughPages(t *testing.T) {
	_, _, fmts := rawFormats(t)
	d := newDecoder(t, fmts)
	names := []string{"<script>", "x pid=1 prio=1", "a\xffb", "abcdefghijklmno"}
	var p page
	for i, n := range names {
		p.event(1, record(t, formatByName(fmts, "sched_waking"), map[string]any{"comm": n, "pid": i + 1}))
		p.event(1, record(t, formatByName(fmts, "sched_migrate_task"), map[string]any{"comm": n, "pid": i + 1})) // __data_loc
	}
	evs, err := d.DecodePage(p.bytes(0, 0), 0, nil)
	if err != nil || len(evs) != 2*len(names) {
		t.Fatalf("%v %d", err, len(evs))
	}
	want := []string{"<script>", "x pid=1 prio=1", `a\xffb`, "abcdefghijklmno"}
	for i, e := range evs {
		if e.Comm != want[i/2] {
			t.Errorf("event %d: comm %q, want %q", i, e.Comm, want[i/2])
		}
	}
	if d.Intern.Escaped != 1 {
		t.Errorf("escaped %d", d.Intern.Escaped)
	}
}

// per_cpu/cpuN/trace_pipe_raw (a tree copied straight from tracefs) is read too.
func TestTracefsTreeLayout(t *testing.T) {
	src := shareddata.Path(t, "traces", "vm2-hackbench-threads.tracefs-raw")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "events"), os.DirFS(filepath.Join(src, "events"))); err != nil {
		t.Fatal(err)
	}
	for i, n := range []string{"cpu0.raw", "cpu1.raw"} {
		b, err := os.ReadFile(filepath.Join(src, "per_cpu", n))
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, "per_cpu", "cpu"+string(rune('0'+i)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "trace_pipe_raw"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	res, err := tracefs.DecodeDir(dir, tracefs.SinkFunc(func(*tracefs.Event) error { n++; return nil }))
	if err != nil || n != 16396 || res.NrCPUs != 2 {
		t.Fatalf("%v %d", err, n)
	}
}
