package live

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracefs"
)

// sharedEvents decodes the recorded raw capture (../shared beside the repo root) and adds
// the rows the capture lacks: exec, llc_util, lost records with and without a count, and
// hostile names.
func sharedEvents(t testing.TB) []tracefs.Event {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "traces", "vm2-hackbench-threads.tracefs-raw")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("test data missing (shared/ must sit beside the repo root): %v", err)
	}
	var evs []tracefs.Event
	if _, err := tracefs.DecodeDir(dir, tracefs.SinkFunc(func(ev *tracefs.Event) error {
		evs = append(evs, *ev)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1].TsNs
	evs = append(evs,
		tracefs.Event{TsNs: last + 1, CPU: 1, Kind: schema.KindExec, Pid: 7, CurPid: 7, Comm: "x pid=1 prio=1", Filename: "/bin/<script>", OldPid: 7},
		tracefs.Event{TsNs: last + 2, CPU: -1, Kind: schema.KindLlcUtil, LLC: 0, Util: 0.25},
		tracefs.Event{TsNs: last + 3, CPU: 0, Kind: schema.KindLost, LostEvents: 12},
		tracefs.Event{TsNs: last + 4, CPU: 1, Kind: schema.KindLost, LostEvents: -1},
		tracefs.Event{TsNs: last + 5, CPU: 0, Kind: schema.KindFork, Pid: 1, Comm: "\\xff\\x00", ChildPid: 2, ChildComm: ""},
		tracefs.Event{TsNs: last + 6, CPU: 0, Kind: schema.KindSwitch, Pid: 1, Comm: "a", PrevState: "R+", NextPid: 0, NextComm: "swapper/0", NextPrio: 120, Prio: 120, HasPrio: true},
	)
	return evs
}

func readStream(t *testing.T, data []byte) arrow.RecordBatch {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Next() {
		t.Fatalf("no record batch in the stream: %v", r.Err())
	}
	rec := r.RecordBatch()
	rec.Retain()
	if r.Next() {
		t.Fatal("more than one record batch in a batch's stream")
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	return rec
}

// The batches (each a whole IPC stream of one record batch, zstd and plain) hold, row for
// row and null for null, what the importers' ArrowSink writes for the same events.
func TestBatchesEqualArrowSink(t *testing.T) {
	evs := sharedEvents(t)
	var ref bytes.Buffer
	sink := tracefs.NewArrowSink(&ref)
	for i := range evs {
		if err := sink.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	want := readStream(t, ref.Bytes())
	defer want.Release()
	if int(want.NumRows()) != len(evs) {
		t.Fatalf("reference has %d rows, want %d", want.NumRows(), len(evs))
	}
	for _, opts := range [][]ipc.Option{nil, {ipc.WithZstd()}} {
		b := NewBatcher(1000, opts...)
		var got []*Batch
		for i := range evs {
			bt, err := b.Add(&evs[i])
			if err != nil {
				t.Fatal(err)
			}
			if bt != nil {
				got = append(got, bt)
			}
		}
		if bt, err := b.Flush(); err != nil || bt == nil {
			t.Fatal(err, bt)
		} else {
			got = append(got, bt)
		}
		if len(got) != (len(evs)+999)/1000 {
			t.Fatalf("%d batches for %d rows", len(got), len(evs))
		}
		off := int64(0)
		byCPU := map[int32]int64{}
		for i, bt := range got {
			if bt.Seq != i {
				t.Fatalf("batch %d has seq %d", i, bt.Seq)
			}
			// what dropping the batch would lose, by CPU: its traced events and its lost counts
			lost, traced := map[int32]int64{}, int64(0)
			for _, ev := range evs[off : off+int64(bt.Rows)] {
				switch {
				case ev.Kind <= schema.KindExec:
					lost[ev.CPU]++
					byCPU[ev.CPU]++
					traced++
				case ev.Kind == schema.KindLost && ev.LostEvents > 0:
					lost[ev.CPU] += ev.LostEvents
				}
			}
			if !maps.Equal(lost, bt.Lost) || traced != bt.Traced {
				t.Fatalf("batch %d: lost %v traced %d, want %v %d", i, bt.Lost, bt.Traced, lost, traced)
			}
			rec := readStream(t, bt.Data)
			if !rec.Schema().Equal(schema.ArrowSchema) || int(rec.NumRows()) != bt.Rows {
				t.Fatalf("batch %d: schema %v, %d rows (said %d)", i, rec.Schema(), rec.NumRows(), bt.Rows)
			}
			for c := 0; c < int(rec.NumCols()); c++ {
				w := array.NewSlice(want.Column(c), off, off+rec.NumRows())
				if !array.Equal(w, rec.Column(c)) {
					t.Fatalf("batch %d column %s differs:\n got %v\nwant %v", i, rec.ColumnName(c), rec.Column(c), w)
				}
				w.Release()
			}
			off += rec.NumRows()
			rec.Release()
		}
		if off != want.NumRows() {
			t.Fatalf("%d rows in the batches, want %d", off, want.NumRows())
		}
		if !maps.Equal(byCPU, b.ByCPU) || b.Rows != int64(len(evs)) {
			t.Fatalf("ByCPU %v rows %d, want %v %d", b.ByCPU, b.Rows, byCPU, len(evs))
		}
	}
}

// BenchmarkBatcher: CPU per event and wire bytes per event of cutting decoded events into
// batches of 16384 rows (the run's default), on the recorded capture.
func BenchmarkBatcher(b *testing.B) {
	evs := sharedEvents(b)
	for _, c := range []struct {
		name string
		opts []ipc.Option
	}{{"zstd", []ipc.Option{ipc.WithZstd()}}, {"lz4", []ipc.Option{ipc.WithLZ4()}}, {"plain", nil}} {
		b.Run(c.name, func(b *testing.B) {
			bat := NewBatcher(16384, c.opts...)
			b.ReportAllocs()
			b.ResetTimer()
			n, size := 0, 0
			for i := 0; i < b.N; i++ {
				for j := range evs {
					bt, err := bat.Add(&evs[j])
					if err != nil {
						b.Fatal(err)
					}
					if bt != nil {
						size += len(bt.Data)
					}
					n++
				}
			}
			if bt, err := bat.Flush(); err != nil {
				b.Fatal(err)
			} else if bt != nil {
				size += len(bt.Data)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
			b.ReportMetric(float64(size)/float64(n), "B/event")
		})
	}
}
