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
	o := NewOutbox(100, dir)
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
