package tracefs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"placemap/collectors/internal/shareddata"
	"placemap/collectors/internal/tracefs"
)

// realPages returns the raw capture's pages per CPU.
func realPages(t testing.TB) [][][]byte {
	dir := shareddata.Path(t, "traces", "vm2-hackbench-threads.tracefs-raw", "per_cpu")
	var cpus [][][]byte
	for _, name := range []string{"cpu0.raw", "cpu1.raw"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var pages [][]byte
		for len(b) >= 4096 {
			pages = append(pages, b[:4096])
			b = b[4096:]
		}
		cpus = append(cpus, pages)
	}
	return cpus
}

// FuzzDecodePage: any bytes as a page give events or a named error, never a panic or
// a read outside the page. Seeds: real pages of the raw capture and crafted ones; a
// plain `go test` runs the seeds.
func FuzzDecodePage(f *testing.F) {
	cpus := realPages(f)
	for _, pages := range cpus {
		for _, p := range pages[:3] {
			f.Add(p)
		}
		f.Add(pages[len(pages)-1])
	}
	_, _, fmts := rawFormats(f)
	var p page
	p.event(5, waking(f, fmts, 1))
	p.word(30, 3)
	p.u32(2)
	p.word(31, 9)
	p.u32(1)
	p.word(29, 7)
	p.u32(12)
	p.u32(0)
	p.u32(0)
	p.event(1, waking(f, fmts, 2))
	f.Add(p.bytes(1000, 1<<31|1<<30))
	f.Add(p.bytes(1000, 0)[:100])
	f.Add([]byte{})
	d := newDecoder(f, nil)
	buf := make([]tracefs.Event, 0, 512)
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := d.DecodePage(data, 0, buf[:0])
		if err == nil && len(data) < 16 {
			t.Fatalf("%d-byte page accepted", len(data))
		}
		// Every event costs at least 8 bytes of page (plus one lost record).
		if len(evs) > len(data)/8+1 {
			t.Fatalf("%d events from %d bytes", len(evs), len(data))
		}
	})
}

// FuzzDecodeStream: a whole per-CPU file of any bytes through the merged reader.
func FuzzDecodeStream(f *testing.F) {
	cpus := realPages(f)
	f.Add(bytes.Join(cpus[1][:2], nil))
	f.Add(append(bytes.Join(cpus[0][:1], nil), 1, 2, 3))
	d := newDecoder(f, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		err := d.Run([]tracefs.Source{{CPU: 0, R: bytes.NewReader(data), Size: int64(len(data)), Name: "fuzz"}},
			tracefs.SinkFunc(func(*tracefs.Event) error { return nil }))
		if err != nil {
			t.Fatal(err)
		}
	})
}

// threadCPU is the CPU time of the calling OS thread (the caller locks it): a
// throughput per CPU-second that other processes on the machine do not distort.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecodeRaw decodes the recorded raw pages on one goroutine (page walk, field
// reads, comm interning, prev_state text) and reports events/s.
func BenchmarkDecodeRaw(b *testing.B) {
	cpus := realPages(b)
	d := newDecoder(b, nil)
	buf := make([]tracefs.Event, 0, 512)
	events, size := 0, 0
	for _, pages := range cpus {
		size += len(pages) * 4096
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	cpu0 := threadCPU()
	for i := 0; i < b.N; i++ {
		for c, pages := range cpus {
			for _, p := range pages {
				var err error
				buf, err = d.DecodePage(p, int32(c), buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				events += len(buf)
			}
		}
	}
	used := threadCPU() - cpu0
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	if used > 0 {
		b.ReportMetric(float64(events)/used.Seconds(), "events/cpu-s")
	}
}

// BenchmarkDecodeRawMerged adds the per-CPU timestamp merge and the Sink call.
func BenchmarkDecodeRawMerged(b *testing.B) {
	cpus := realPages(b)
	d := newDecoder(b, nil)
	var srcs []tracefs.Source
	for c, pages := range cpus {
		data := bytes.Join(pages, nil)
		srcs = append(srcs, tracefs.Source{CPU: int32(c), R: bytes.NewReader(data), Size: int64(len(data))})
	}
	events := 0
	sink := tracefs.SinkFunc(func(*tracefs.Event) error { events++; return nil })
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	cpu0 := threadCPU()
	for i := 0; i < b.N; i++ {
		if err := d.Run(srcs, sink); err != nil {
			b.Fatal(err)
		}
	}
	used := threadCPU() - cpu0
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	if used > 0 {
		b.ReportMetric(float64(events)/used.Seconds(), "events/cpu-s")
	}
}
