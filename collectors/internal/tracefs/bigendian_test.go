package tracefs_test

import (
	"encoding/binary"
	"testing"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracefs"
)

// swapRecord turns a little-endian record built by record() into the big-endian one a
// BE kernel writes: every integer field of the format byte-swapped in place, the
// __data_loc words too (char arrays and string bytes are not numbers).
func swapRecord(f *tracefs.EventFormat, rec []byte) []byte {
	out := append([]byte(nil), rec...)
	for _, fd := range append(append([]tracefs.Field(nil), f.Common...), f.Fields...) {
		if fd.ArrayLen != 0 || (fd.IsString() && !fd.DataLoc) {
			continue
		}
		b := out[fd.Offset : fd.Offset+fd.Size]
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
	}
	return out
}

// On a big-endian machine the event header's bit fields are reversed: type_len is the
// top 5 bits of the word, time_delta the low 27.
func TestBigEndianPage(t *testing.T) {
	ph, eh, fmts := rawFormats(t)
	d, err := tracefs.NewDecoder(ph, eh, fmts, tracefs.Options{BigEndian: true, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	var data []byte
	word := func(typeLen, delta uint32) { data = be.AppendUint32(data, typeLen<<27|delta) }
	sw := formatByName(fmts, "sched_switch")
	rec := swapRecord(sw, record(t, sw, map[string]any{"common_pid": 42, "prev_comm": "be", "prev_pid": 42, "prev_prio": 120, "prev_state": 1, "next_comm": "nx", "next_pid": 43, "next_prio": 110}))
	word(uint32(len(rec)/4), 7)
	data = append(data, rec...)
	word(30, 1) // TIME_EXTEND by (1<<27)+1
	data = be.AppendUint32(data, 1)
	mig := formatByName(fmts, "sched_migrate_task")
	rec = swapRecord(mig, record(t, mig, map[string]any{"comm": "mover", "pid": 5, "prio": 100, "orig_cpu": 2, "dest_cpu": 3}))
	word(uint32(len(rec)/4), 2)
	data = append(data, rec...)
	page := make([]byte, 4096)
	be.PutUint64(page, 1000)
	be.PutUint64(page[8:], uint64(len(data)))
	copy(page[16:], data)
	evs, err := d.DecodePage(page, 0, nil)
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v %+v", err, evs)
	}
	s, m := evs[0], evs[1]
	if s.Kind != schema.KindSwitch || s.TsNs != 1007 || s.CurPid != 42 || s.Pid != 42 || s.Comm != "be" || s.PrevState != "S" || s.NextPid != 43 || s.NextComm != "nx" || s.NextPrio != 110 {
		t.Errorf("switch %+v", s)
	}
	if m.Kind != schema.KindMigrate || m.TsNs != 1007+(1<<27)+1+2 || m.Comm != "mover" || m.Pid != 5 || m.OrigCPU != 2 || m.DestCPU != 3 {
		t.Errorf("migrate %+v", m)
	}
}
