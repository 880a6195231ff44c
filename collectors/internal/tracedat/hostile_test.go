package tracedat_test

import (
	"errors"
	"os"
	"testing"

	"placemap/collectors/internal/shareddata"
	"placemap/collectors/internal/tracedat"
	"placemap/collectors/internal/tracefs"
)

func TestHostileTraceDat(t *testing.T) {
	lisa, err := os.ReadFile(shareddata.Path(t, "traces", "external", "lisa", "sched_load", "trace.dat"))
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := os.ReadFile(shareddata.Path(t, "traces", "vm2-hackbench-mixed.trace.dat"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"not trace.dat", []byte("hello"), tracedat.ErrNotTraceDat},
		{"version 5", []byte(tracedat.Magic + "5\x00\x00\x08\x00\x10\x00\x00"), tracedat.ErrVersion},
		{"cut in the header", lisa[:20], tracedat.ErrTruncated},
		{"cut in the formats", lisa[:5000], tracedat.ErrTruncated},
		{"v6 cut in the cpu data", lisa[:len(lisa)-100000], tracedat.ErrTruncated},
		{"v7 cut in the buffers", mixed[:len(mixed)-1000], tracedat.ErrTruncated},
		{"v7 unknown compression", append([]byte(tracedat.Magic+"7\x00\x00\x08\x00\x10\x00\x00lz9\x001\x00"), make([]byte, 8)...), tracedat.ErrCompression},
	}
	for _, c := range cases {
		if _, err := tracedat.Parse(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// A corrupt zstd chunk is a named error, not garbage pages.
	bad := append([]byte(nil), mixed...)
	for i := 0x117000 + 40; i < 0x117000+200; i++ {
		bad[i] ^= 0x5a
	}
	if _, err := tracedat.Parse(bad); !errors.Is(err, tracedat.ErrCorrupt) && !errors.Is(err, tracedat.ErrTruncated) {
		t.Errorf("corrupt chunk: %v", err)
	}
	// Garbage in a v6 CPU's pages: counted bad pages, the rest decoded.
	f2, err := tracedat.Parse(append([]byte(nil), lisa...))
	if err != nil {
		t.Fatal(err)
	}
	d := f2.Buffers[0].CPUs[0].Data
	for i := 16; i < 64; i++ {
		d[4096+i] = 0xff
	}
	res, err := f2.Decode(tracefs.SinkFunc(func(*tracefs.Event) error { return nil }), tracedat.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Skipped[tracefs.SkipBadPage] == 0 || res.Stats.EventsByKind[4] == 0 {
		t.Errorf("garbage page: %v %v", res.Stats.Skipped, res.Stats.Warnings)
	}
}

// FuzzParse: any bytes give a File or a named error, never a panic.
func FuzzParse(f *testing.F) {
	lisa, err := os.ReadFile(shareddata.Path(f, "traces", "external", "lisa", "sched_load", "trace.dat"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(lisa[:70000])
	f.Add([]byte(tracedat.Magic + "7\x00\x00\x08\x00\x10\x00\x00none\x00\x00\x20\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tf, err := tracedat.Parse(b)
		if err != nil {
			return
		}
		_, _ = tf.Decode(tracefs.SinkFunc(func(*tracefs.Event) error { return nil }), tracedat.DecodeOptions{})
	})
}
