package rawimport_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/shareddata"
	"placemap/collectors/internal/tracefs/rawimport"
)

// readArrow reads an IPC stream back: rows, and per kind the columns that were null.
func readArrow(t *testing.T, b []byte) (int, map[schema.Kind]map[int]bool, []int64) {
	rd, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	if !rd.Schema().Equal(schema.ArrowSchema) {
		t.Fatalf("schema %v", rd.Schema())
	}
	rows := 0
	nulls := map[schema.Kind]map[int]bool{}
	var ts []int64
	for rd.Next() {
		rec := rd.RecordBatch()
		kinds := rec.Column(schema.ColKind).(*array.Uint8)
		ts = append(ts, rec.Column(schema.ColTsNs).(*array.Int64).Int64Values()...)
		for r := 0; r < int(rec.NumRows()); r++ {
			k := schema.Kind(kinds.Value(r))
			if nulls[k] == nil {
				nulls[k] = map[int]bool{}
			}
			for c := 0; c < int(rec.NumCols()); c++ {
				if rec.Column(c).IsNull(r) {
					nulls[k][c] = true
				}
			}
		}
		rows += int(rec.NumRows())
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, nulls, ts
}

func TestImportRawCaptureToArrow(t *testing.T) {
	dir := shareddata.Path(t, "traces", "vm2-hackbench-threads.tracefs-raw")
	if got := rawimport.Detect(dir); got != rawimport.FormatTracefsRaw {
		t.Fatalf("detect %q", got)
	}
	out := filepath.Join(t.TempDir(), "x.arrow")
	sum, err := rawimport.Run(rawimport.Options{Path: dir, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out + ".partial"); !os.IsNotExist(err) {
		t.Error(".partial left behind")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, nulls, ts := readArrow(t, b)
	if rows != 16396 || sum.EventsTotal != 16396 || sum.Format != "tracefs-raw" {
		t.Fatalf("%d rows, summary %+v", rows, sum)
	}
	for i := 1; i < len(ts); i++ {
		if ts[i] < ts[i-1] {
			t.Fatalf("row %d out of order", i)
		}
	}
	// Columns a kind defines are never null; the others always are.
	defined := map[schema.Kind][]int{
		schema.KindSwitch:  {schema.ColPrio, schema.ColPrevState, schema.ColNextPid, schema.ColNextComm, schema.ColNextPrio},
		schema.KindWaking:  {schema.ColPrio, schema.ColTargetCpu},
		schema.KindMigrate: {schema.ColOrigCpu, schema.ColDestCpu},
		schema.KindFork:    {schema.ColChildPid, schema.ColChildComm},
	}
	for k, cols := range defined {
		for _, c := range cols {
			if nulls[k][c] {
				t.Errorf("%s: column %d has nulls", schema.KindNames[k], c)
			}
		}
		for _, c := range []int{schema.ColLlc, schema.ColUtil, schema.ColLostEvents, schema.ColFilename} {
			if !nulls[k][c] {
				t.Errorf("%s: column %d not null", schema.KindNames[k], c)
			}
		}
	}
	if !nulls[schema.KindSwitch][schema.ColTargetCpu] || !nulls[schema.KindFork][schema.ColPrio] {
		t.Error("kind-foreign columns must be null")
	}
}

func TestImportTraceDatInstanceToStdout(t *testing.T) {
	p := shareddata.Path(t, "traces", "vm2-hackbench-mixed.trace.dat")
	if got := rawimport.Detect(p); got != rawimport.FormatTracedat {
		t.Fatalf("detect %q", got)
	}
	var buf bytes.Buffer
	sum, err := rawimport.Run(rawimport.Options{Path: p, Out: "-", Stdout: &buf, Instance: "capture"})
	if err != nil {
		t.Fatal(err)
	}
	rows, _, _ := readArrow(t, buf.Bytes())
	if rows != 72578 || sum.EventsTotal != 72578 || sum.Format != "tracedat" || sum.Header["buffers"].([]string)[0] != "capture" {
		t.Fatalf("%d rows, summary %+v", rows, sum)
	}
	if _, err := rawimport.Run(rawimport.Options{Path: p, Out: filepath.Join(t.TempDir(), "y"), Instance: "nope"}); err == nil {
		t.Error("unknown instance accepted")
	}
	if rawimport.Detect(shareddata.Path(t, "traces", "README.md")) != "" {
		t.Error("text detected as binary")
	}
}

// A capture whose CPU 0 pages are out of order (its clock "went back"): the output is
// still sorted, nothing is lost, and the summary says so.
func TestOutOfOrderCaptureIsSorted(t *testing.T) {
	src := shareddata.Path(t, "traces", "vm2-hackbench-threads.tracefs-raw")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "events"), os.DirFS(filepath.Join(src, "events"))); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "per_cpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"cpu0.raw", "cpu1.raw"} {
		b, err := os.ReadFile(filepath.Join(src, "per_cpu", n))
		if err != nil {
			t.Fatal(err)
		}
		if n == "cpu0.raw" { // swap pages 2 and 5
			p2 := append([]byte(nil), b[2*4096:3*4096]...)
			copy(b[2*4096:], b[5*4096:6*4096])
			copy(b[5*4096:], p2)
		}
		if err := os.WriteFile(filepath.Join(dir, "per_cpu", n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	sum, err := rawimport.Run(rawimport.Options{Path: dir, Out: "-", Stdout: &buf})
	if err != nil {
		t.Fatal(err)
	}
	rows, _, ts := readArrow(t, buf.Bytes())
	if rows != 16396 || sum.OutOfOrder == 0 || len(sum.Warnings) == 0 {
		t.Fatalf("%d rows, out of order %d, warnings %v", rows, sum.OutOfOrder, sum.Warnings)
	}
	for i := 1; i < len(ts); i++ {
		if ts[i] < ts[i-1] {
			t.Fatalf("row %d out of order", i)
		}
	}
}
