package importer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/shareddata"
)

// chunkRows imports files with Chunks on and reads the frames back: rows per chunk,
// the rows themselves (dictionaries undone) and each chunk's schema.
func chunkRows(t *testing.T, files ...string) ([]int, []row, []*arrow.Schema) {
	t.Helper()
	var out bytes.Buffer
	if _, err := Run(Options{Files: files, Out: "-", Stdout: &out, Chunks: true}); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var rows []row
	var schemas []*arrow.Schema
	b := out.Bytes()
	for len(b) > 0 {
		if len(b) < ChunkHeaderBytes || string(b[:4]) != ChunkMagic {
			t.Fatalf("bad frame header %q", b[:min(len(b), ChunkHeaderBytes)])
		}
		n := int(binary.LittleEndian.Uint32(b[4:]))
		size := int(binary.LittleEndian.Uint64(b[8:]))
		rd, err := ipc.NewReader(bytes.NewReader(b[ChunkHeaderBytes : ChunkHeaderBytes+size]))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for rd.Next() {
			rec := plainRecord(t, rd.RecordBatch())
			for i := 0; i < int(rec.NumRows()); i++ {
				rows = append(rows, rowAt(rec, i))
			}
			got += int(rec.NumRows())
			rec.Release()
		}
		if got != n {
			t.Fatalf("frame says %d rows, holds %d", n, got)
		}
		schemas = append(schemas, rd.Schema())
		rd.Release()
		sizes = append(sizes, n)
		b = b[ChunkHeaderBytes+size:]
	}
	return sizes, rows, schemas
}

// plainRecord replaces dictionary columns by plain strings, in schema.ArrowSchema.
func plainRecord(t *testing.T, r arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, r.NumCols())
	for i, c := range r.Columns() {
		d, ok := c.(*array.Dictionary)
		if !ok {
			c.Retain()
			cols[i] = c
			continue
		}
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		dict := d.Dictionary().(*array.String)
		for j := 0; j < d.Len(); j++ {
			if d.IsNull(j) {
				sb.AppendNull()
			} else {
				sb.Append(dict.Value(d.GetValueIndex(j)))
			}
		}
		cols[i] = sb.NewArray()
		sb.Release()
	}
	out := array.NewRecordBatch(schema.ArrowSchema, cols, r.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}

func TestChunkOutputHoldsTheStreamsRowsInFullChunks(t *testing.T) {
	for _, f := range []string{"traces/vm2-hackbench-g4.ftrace.txt.gz", "traces/vm2-hackbench-g2.perf-script.txt.gz"} {
		path := shareddata.Path(t, f)
		_, want := importRows(t, FormatAuto, path)
		sizes, got, schemas := chunkRows(t, path)
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", f, len(got), len(want))
		}
		for i, n := range sizes {
			if i < len(sizes)-1 && n != schema.BatchRows {
				t.Fatalf("%s: chunk %d has %d rows, only the last may have fewer than %d", f, i, n, schema.BatchRows)
			}
		}
		for i := range want {
			if d := diffRow(got[i], want[i]); d != "" {
				t.Fatalf("%s: row %d: %s", f, i, d)
			}
		}
		// comm repeats in every real chunk: it is stored as a dictionary with int8 indices here
		if ty := schemas[0].Field(schema.ColComm).Type; ty.ID() != arrow.DICTIONARY || ty.(*arrow.DictionaryType).IndexType.ID() != arrow.INT8 {
			t.Fatalf("%s: comm stored as %v", f, ty)
		}
	}
}

func TestChunkDictionaryOnlyWhereValuesRepeat(t *testing.T) {
	c := newCols()
	c.reset(400)
	for i := 0; i < 400; i++ {
		e := event{kind: schema.KindSwitch, pid: int32(i), comm: []byte(fmt.Sprintf("t%d", i)), nextComm: []byte(fmt.Sprintf("n%d", i%200)), prevState: []byte("S")}
		if i%2 == 1 {
			e.prevState = nil // null rows stay null
		}
		c.add(&e)
	}
	c.finish()
	e := newChunkEncoder()
	// 400 distinct of 400: plain; 200 of 400 (2*200 is not < 400): plain; 1: int8 dictionary
	if d := e.dictionary(&c.comm, c.n, &dictScratch{}); d != nil {
		t.Fatalf("unique comms dictionary-encoded: %v", d.DataType())
	}
	if d := e.dictionary(&c.nextComm, c.n, &dictScratch{}); d != nil {
		t.Fatalf("half-distinct next_comm dictionary-encoded: %v", d.DataType())
	}
	d := e.dictionary(&c.prevState, c.n, &dictScratch{})
	if d == nil {
		t.Fatal("prev_state with one value not encoded")
	}
	defer d.Release()
	da := d.(*array.Dictionary)
	if da.NullN() != 200 || da.Dictionary().Len() != 1 || da.DataType().(*arrow.DictionaryType).IndexType.ID() != arrow.INT8 {
		t.Fatalf("prev_state: %d nulls, %d values, %v", da.NullN(), da.Dictionary().Len(), da.DataType())
	}
	// 199 distinct of 400 (398 < 400): int16 is not needed below 128 values, int16 above
	c.reset(400)
	for i := 0; i < 400; i++ {
		c.add(&event{kind: schema.KindFork, comm: []byte(fmt.Sprintf("c%d", i%199)), childComm: []byte("x")})
	}
	c.finish()
	d2 := e.dictionary(&c.comm, c.n, &dictScratch{})
	if d2 == nil || d2.DataType().(*arrow.DictionaryType).IndexType.ID() != arrow.INT16 {
		t.Fatalf("199 distinct of 400: %v", d2)
	}
	d2.Release()
}

func TestChunksNeedTheStreamOutput(t *testing.T) {
	if _, err := Run(Options{Files: []string{shareddata.Path(t, "traces/vm2-hackbench-g4.ftrace.txt.gz")}, Out: t.TempDir() + "/x.arrow", Chunks: true}); err == nil {
		t.Fatal("Chunks with a file output accepted")
	}
}

func TestCopyBitsAtAnyOffsets(t *testing.T) {
	src := make([]byte, 40)
	// k up to 200 from offsets up to 16 also runs the 64-bit steps, shifted and not
	for i := range src {
		src[i] = byte(i*37 + 11) // an irregular pattern
	}
	for sOff := 0; sOff < 17; sOff++ {
		for dOff := 0; dOff < 17; dOff++ {
			for _, k := range []int{0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 200} {
				dst := make([]byte, 40)
				got := copyBits(dst, dOff, src, sOff, k)
				want := 0
				for i := 0; i < 320; i++ {
					in := i >= dOff && i < dOff+k && src[(i-dOff+sOff)>>3]&(1<<((i-dOff+sOff)&7)) != 0
					if in {
						want++
					}
					if (dst[i>>3]&(1<<(i&7)) != 0) != in {
						t.Fatalf("sOff %d dOff %d k %d: bit %d wrong", sOff, dOff, k, i)
					}
				}
				if got != want {
					t.Fatalf("sOff %d dOff %d k %d: counted %d set, want %d", sOff, dOff, k, got, want)
				}
			}
		}
	}
}

// The chunk output takes the stream's ordering rules: held disorder sorted, later
// disorder a named error; an empty input is an empty output.
func TestChunkOutputOrdering(t *testing.T) {
	line := func(ts, pid string) string {
		return "            bash-1       [000] d..2.   " + ts + ": sched_wakeup: comm=a pid=" + pid + " prio=120 target_cpu=001\n"
	}
	in := writeFile(t, "u.txt", []byte(line("5.000003", "1")+line("5.000001", "2")+line("6.0", "3")))
	sizes, rows, _ := chunkRows(t, in)
	if len(sizes) != 1 || len(rows) != 3 || rows[0].pid != 2 || rows[1].pid != 1 || rows[2].pid != 3 {
		t.Fatalf("sizes %v rows %v", sizes, rows)
	}
	defer func(h int) { holdRows = h }(holdRows)
	holdRows = 1
	in2 := writeFile(t, "v.txt", []byte(line("1.0", "4")))
	var out bytes.Buffer
	if _, err := Run(Options{Files: []string{in, in2}, Out: "-", Stdout: &out, Chunks: true}); err == nil || !strings.Contains(err.Error(), "--out X.arrow") {
		t.Errorf("err %v", err)
	}
	if sizes, rows, _ := chunkRows(t, writeFile(t, "empty.txt", nil)); len(sizes) != 0 || len(rows) != 0 {
		t.Errorf("empty input: %v chunks", sizes)
	}
}

// sameShort equals bytes.Equal for every length up to 20 and a change of any one byte.
func TestSameShortIsBytesEqual(t *testing.T) {
	for n := 0; n <= 20; n++ {
		a := []byte("abcdefghijklmnopqrstuvwxyz")[:n]
		for _, b := range [][]byte{append([]byte(nil), a...), a[:max(n-1, 0)], append(append([]byte(nil), a...), 'x')} {
			if got, want := sameShort(a, b), bytes.Equal(a, b); got != want {
				t.Fatalf("sameShort(%q, %q) = %v", a, b, got)
			}
		}
		for i := 0; i < n; i++ {
			b := append([]byte(nil), a...)
			b[i] ^= 0x40
			if sameShort(a, b) {
				t.Fatalf("sameShort(%q, %q) = true", a, b)
			}
		}
	}
}
