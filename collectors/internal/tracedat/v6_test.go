package tracedat_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"placemap/collectors/internal/shareddata"
	"placemap/collectors/internal/tracedat"
	"placemap/collectors/internal/tracefs"
)

// buildV6 writes a version-6 trace.dat the way trace-cmd does, from the raw capture's
// format files and pages: the top buffer holds cpu0.raw/cpu1.raw, an instance
// "capture" (a v6 BUFFER option pointing at its own flyrecord table) holds the same
// pages again, and an OFFSET option shifts every timestamp by -1 s.
func buildV6(t *testing.T) []byte {
	dir := shareddata.Path(t, "traces", "vm2-hackbench-threads.tracefs-raw")
	read := func(p ...string) []byte {
		b, err := os.ReadFile(filepath.Join(append([]string{dir}, p...)...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	le := binary.LittleEndian
	var b bytes.Buffer
	u16 := func(v uint16) { b.Write(le.AppendUint16(nil, v)) }
	u32 := func(v uint32) { b.Write(le.AppendUint32(nil, v)) }
	u64 := func(v uint64) { b.Write(le.AppendUint64(nil, v)) }
	b.WriteString(tracedat.Magic + "6\x00")
	b.Write([]byte{0, 8})
	u32(4096)
	for _, h := range []string{"header_page", "header_event"} {
		b.WriteString(h + "\x00")
		data := read("events", h)
		u64(uint64(len(data)))
		b.Write(data)
	}
	u32(0) // ftrace formats
	u32(1) // one system
	b.WriteString("sched\x00")
	evs, _ := filepath.Glob(filepath.Join(dir, "events", "sched", "*", "format"))
	u32(uint32(len(evs)))
	for _, p := range evs {
		data, _ := os.ReadFile(p)
		u64(uint64(len(data)))
		b.Write(data)
	}
	u32(0) // kallsyms
	u32(0) // printk
	u64(0) // cmdlines
	u32(2) // cpus
	b.WriteString("options  \x00")
	off := []byte("-1000000000\x00")
	u16(7) // OFFSET
	u32(uint32(len(off)))
	b.Write(off)
	bufOpt := b.Len() + 6 // where the BUFFER option's offset field will be
	u16(3)
	u32(8 + 8)
	u64(0) // patched below
	b.WriteString("capture\x00")
	u16(0) // DONE
	b.WriteString("flyrecord\x00")
	pages := [][]byte{read("per_cpu", "cpu0.raw"), read("per_cpu", "cpu1.raw")}
	table := func() int {
		at := b.Len()
		for range pages {
			u64(0)
			u64(0)
		}
		return at
	}
	put := func(tableAt int) {
		for i, p := range pages {
			for b.Len()%4096 != 0 {
				b.WriteByte(0)
			}
			o := b.Len()
			b.Write(p)
			raw := b.Bytes()
			le.PutUint64(raw[tableAt+16*i:], uint64(o))
			le.PutUint64(raw[tableAt+16*i+8:], uint64(len(p)))
		}
	}
	put(table())
	inst := b.Len()
	le.PutUint64(b.Bytes()[bufOpt:], uint64(inst))
	b.WriteString("flyrecord\x00")
	put(table())
	return b.Bytes()
}

func TestV6InstanceBufferAndOffset(t *testing.T) {
	f, err := tracedat.Parse(buildV6(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.BufferNames(); len(got) != 2 || got[1] != "capture" || f.TSOffset != -1_000_000_000 {
		t.Fatalf("buffers %v offset %d", got, f.TSOffset)
	}
	for _, inst := range []string{"top", "capture"} {
		evs, res := decode(t, f, inst)
		if len(evs) != 16396 || res.Stats.Records[0] != 8609 || res.Stats.Records[1] != 7787 {
			t.Errorf("%s: %d events, records %v", inst, len(evs), res.Stats.Records)
		}
		// The raw capture's first event is at 964.058236663 (see its trace.txt).
		if evs[0].TsNs != 964_058_236_663-1_000_000_000 {
			t.Errorf("%s: first ts %d", inst, evs[0].TsNs)
		}
	}
	evs, res := decode(t, f, "")
	if len(evs) != 2*16396 || len(res.Buffers) != 2 {
		t.Errorf("all buffers: %d events %v", len(evs), res.Buffers)
	}
	var n int
	if _, err := f.Decode(tracefs.SinkFunc(func(*tracefs.Event) error { n++; return nil }), tracedat.DecodeOptions{Instance: "top"}); err != nil || n != 16396 {
		t.Errorf("%v %d", err, n)
	}
}
