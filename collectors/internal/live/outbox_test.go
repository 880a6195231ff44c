package live

import (
	"bytes"
	"os"
	"testing"
)

// Beyond its memory limit the outbox spills to a file, hands spilled batches back intact
// for a resend, and empties the file once they are acknowledged.
func TestOutboxSpillsAndResends(t *testing.T) {
	dir := t.TempDir()
	o := NewOutbox(100, dir, 0)
	defer o.Close()
	data := func(seq int) []byte { return bytes.Repeat([]byte{byte('a' + seq)}, 60) }
	for seq := 0; seq < 5; seq++ {
		if err := o.Add(&Batch{Seq: seq, Rows: seq + 1, Data: data(seq)}); err != nil {
			t.Fatal(err)
		}
	}
	if o.Spilled != 4 || o.SpillPath() == "" {
		t.Fatalf("spilled %d batches to %q, want 4 (only one 60-byte batch fits in 100 bytes)", o.Spilled, o.SpillPath())
	}
	// A reconnect whose welcome says last_seq 1: resend from 2, in order, bytes intact.
	o.AckThrough(1)
	for want, after := 2, 1; want < 5; want++ {
		b, err := o.After(after)
		if err != nil || b == nil || b.Seq != want || b.Rows != want+1 || !bytes.Equal(b.Data, data(want)) {
			t.Fatalf("After(%d) = %+v, %v; want batch %d", after, b, err, want)
		}
		after = b.Seq
	}
	o.Remove(3, "cpu 99 is not a CPU of the hello's topology")
	o.Remove(2, "")
	o.Remove(4, "")
	if o.Len() != 0 || o.Rejected != 1 || o.RejRows != 4 {
		t.Fatalf("len %d rejected %d rows %d", o.Len(), o.Rejected, o.RejRows)
	}
	st, err := os.Stat(o.SpillPath())
	if err != nil || st.Size() != 0 {
		t.Fatalf("spill file not emptied: %v %v", st, err)
	}
	if b, _ := o.After(-1); b != nil {
		t.Fatalf("After on an empty outbox = %+v", b)
	}
}

// The spill file never grows past its cap: a batch that would is dropped, counted, and
// what it held comes back once (TakeDropped) by recording CPU, to be sent as lost records;
// once the spilled batches are acknowledged there is room again.
func TestOutboxSpillCapDropsAndCounts(t *testing.T) {
	dir := t.TempDir()
	o := NewOutbox(100, dir, 130) // one 60-byte batch in memory, two in the spill file
	defer o.Close()
	data := bytes.Repeat([]byte{'x'}, 60)
	for seq := 0; seq < 6; seq++ {
		// 10 rows: 7 traced events on cpu 0 and 1 on cpu 1, a lost record of 5 on cpu 1, one llc_util
		b := &Batch{Seq: seq, Rows: 10, Data: data, Lost: map[int32]int64{0: 7, 1: 1 + 5}, Traced: 8}
		if err := o.Add(b); err != nil {
			t.Fatal(err)
		}
		if o.SpillBytes() > 130 {
			t.Fatalf("spill file at %d bytes, cap 130", o.SpillBytes())
		}
	}
	if o.Spilled != 2 || o.Dropped != 3 || o.DroppedRows != 30 || o.DroppedEvents != 24 || o.Len() != 3 {
		t.Fatalf("spilled %d dropped %d rows %d events %d len %d; want 2 3 30 24 3", o.Spilled, o.Dropped, o.DroppedRows, o.DroppedEvents, o.Len())
	}
	st, err := os.Stat(o.SpillPath())
	if err != nil || st.Size() > 130 {
		t.Fatalf("spill file %v %v, cap 130", st, err)
	}
	d := o.TakeDropped()
	if d[0] != 21 || d[1] != 18 || len(d) != 2 {
		t.Fatalf("TakeDropped = %v, want map[0:21 1:18]", d)
	}
	if again := o.TakeDropped(); again != nil {
		t.Fatalf("dropped counts handed out twice: %v", again)
	}
	// The batches kept go out in order, skipping the dropped seqs; acknowledged, they free the file.
	var seqs []int
	for after := -1; ; {
		b, err := o.After(after)
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			break
		}
		seqs = append(seqs, b.Seq)
		after = b.Seq
	}
	if len(seqs) != 3 || seqs[0] != 0 || seqs[1] != 1 || seqs[2] != 2 {
		t.Fatalf("kept seqs %v, want [0 1 2]", seqs)
	}
	o.AckThrough(2)
	if err := o.Add(&Batch{Seq: 6, Rows: 10, Data: data}); err != nil {
		t.Fatal(err)
	}
	if err := o.Add(&Batch{Seq: 7, Rows: 10, Data: data}); err != nil {
		t.Fatal(err)
	}
	if o.Dropped != 3 || o.Len() != 2 || o.Spilled != 3 {
		t.Fatalf("after the acks: dropped %d len %d spilled %d; want 3 2 3", o.Dropped, o.Len(), o.Spilled)
	}
}
