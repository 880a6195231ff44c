package importer

import (
	"compress/gzip"
	"io"
	"os"
	"syscall"
	"testing"

	"placemap/collectors/internal/shareddata"
)

// cpuNow is the process's user+system CPU time: the machine is shared, so the
// benchmark reports CPU per event next to wall-clock throughput.
func cpuNow(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// g4Text is the real vm2-hackbench-g4 ftrace text, uncompressed, as one parse chunk.
func g4Text(b *testing.B) *chunk {
	f, err := os.Open(shareddata.Path(b, "traces/vm2-hackbench-g4.ftrace.txt.gz"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		b.Fatal(err)
	}
	return &chunk{data: data, format: FormatFtrace, nrCpus: 2}
}

// BenchmarkParseChunk measures the parse worker alone (no I/O) on the real
// vm2-hackbench-g4 ftrace text; bench/import_bench.sh measures end to end.
func BenchmarkParseChunk(b *testing.B) {
	ck := g4Text(b)
	data := ck.data
	w := &worker{}
	pool := []*cols{}
	get := func(rows int) *cols {
		var c *cols
		if len(pool) > 0 {
			c, pool = pool[len(pool)-1], pool[:len(pool)-1]
		} else {
			c = newCols()
		}
		c.reset(rows)
		return c
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	cpu0 := cpuNow(b)
	events := 0
	for i := 0; i < b.N; i++ {
		r := w.parse(ck, get)
		for _, c := range r.batch {
			events += c.n
			pool = append(pool, c)
		}
	}
	cpu := cpuNow(b) - cpu0
	b.ReportMetric(float64(events)/b.Elapsed().Seconds()/1e6, "Mevents/s")
	if events > 0 {
		b.ReportMetric(float64(cpu)/float64(events), "cpu-ns/event")
	}
}
