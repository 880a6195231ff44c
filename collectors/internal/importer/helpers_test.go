package importer

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"placemap/collectors/internal/schema"
)

// readText returns a file's bytes, gunzipped when it is gzip.
func readText(tb testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			tb.Fatal(err)
		}
		if b, err = io.ReadAll(z); err != nil {
			tb.Fatal(err)
		}
	}
	return b
}

// row is one output row read back, nullable fields as pointers.
type row struct {
	ts                  int64
	cpu                 int32
	kind                schema.Kind
	curPid              int32
	tgid                *int32
	pid                 int32
	comm                string
	prio, target, orig  *int32
	dest                *int32
	prevState           *string
	nextPid             *int32
	nextComm            *string
	nextPrio, childPid  *int32
	childComm, filename *string
	oldPid, llc         *int32
	lost                *int64
}

// importRows runs the importer on files and reads the output back with arrow-go's IPC
// stream reader.
func importRows(t *testing.T, format Format, files ...string) (*schema.ImportSummary, []row) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.arrow")
	s, err := Run(Options{Files: files, Format: format, Out: out})
	if err != nil {
		t.Fatalf("import %v: %v", files, err)
	}
	return s, readRows(t, out)
}

func readRows(t *testing.T, path string) []row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := ipc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	if !rd.Schema().Equal(schema.ArrowSchema) {
		t.Fatalf("schema %v", rd.Schema())
	}
	var rows []row
	for rd.Next() {
		rec := rd.RecordBatch()
		if rec.NumRows() > schema.BatchRows {
			t.Fatalf("batch of %d rows", rec.NumRows())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			rows = append(rows, rowAt(rec, i))
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func rowAt(r arrow.RecordBatch, i int) row {
	i32 := func(c int) *int32 {
		a := r.Column(c).(*array.Int32)
		if a.IsNull(i) {
			return nil
		}
		v := a.Value(i)
		return &v
	}
	str := func(c int) *string {
		a := r.Column(c).(*array.String)
		if a.IsNull(i) {
			return nil
		}
		v := a.Value(i)
		return &v
	}
	var lost *int64
	if a := r.Column(schema.ColLostEvents).(*array.Int64); a.IsValid(i) {
		v := a.Value(i)
		lost = &v
	}
	return row{
		ts:        r.Column(schema.ColTsNs).(*array.Int64).Value(i),
		cpu:       r.Column(schema.ColCpu).(*array.Int32).Value(i),
		kind:      schema.Kind(r.Column(schema.ColKind).(*array.Uint8).Value(i)),
		curPid:    r.Column(schema.ColCurPid).(*array.Int32).Value(i),
		tgid:      i32(schema.ColTgid),
		pid:       r.Column(schema.ColPid).(*array.Int32).Value(i),
		comm:      *str(schema.ColComm),
		prio:      i32(schema.ColPrio),
		target:    i32(schema.ColTargetCpu),
		orig:      i32(schema.ColOrigCpu),
		dest:      i32(schema.ColDestCpu),
		prevState: str(schema.ColPrevState),
		nextPid:   i32(schema.ColNextPid),
		nextComm:  str(schema.ColNextComm),
		nextPrio:  i32(schema.ColNextPrio),
		childPid:  i32(schema.ColChildPid),
		childComm: str(schema.ColChildComm),
		filename:  str(schema.ColFilename),
		oldPid:    i32(schema.ColOldPid),
		llc:       i32(schema.ColLlc),
		lost:      lost,
	}
}

func p32(v int32) *int32    { return &v }
func pstr(v string) *string { return &v }

func filepathStat(p string) (os.FileInfo, error) {
	if fi, err := os.Stat(p); err == nil {
		return fi, nil
	}
	return os.Stat(p + ".partial")
}

// readTs reads only the ts_ns column of an output back.
func readTs(t *testing.T, path string) []int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := ipc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	var ts []int64
	for rd.Next() {
		ts = append(ts, rd.RecordBatch().Column(schema.ColTsNs).(*array.Int64).Int64Values()...)
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return ts
}
