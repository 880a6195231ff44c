package importer

import (
	"bytes"
	"testing"

	"placemap/collectors/internal/schema"
)

// BenchmarkChunkEncode measures encoding one 65,536-row chunk of the real
// vm2-hackbench-g4 trace into its stored form (dictionary-encoded Arrow IPC).
func BenchmarkChunkEncode(b *testing.B) {
	c := g4Chunk(b)
	e := newChunkEncoder()
	var frame bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.encode(c, &frame); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*c.n)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}

func g4Chunk(b *testing.B) *cols {
	ck := g4Text(b)
	r := (&worker{}).parse(ck, func(rows int) *cols { c := newCols(); c.reset(rows); return c })
	c := newCols()
	c.reset(schema.BatchRows)
	for _, x := range r.batch {
		x.finish()
		c.appendFrom(x, 0, min(x.n, c.rows-c.n))
		if c.full() {
			break
		}
	}
	return c
}
