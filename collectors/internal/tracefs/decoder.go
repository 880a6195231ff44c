package tracefs

import (
	"encoding/binary"
	"fmt"
	"path"
	"sort"

	"placemap/collectors/internal/schema"
)

// Skip reasons counted in Stats.Skipped (the ImportSummary's skipped keys).
const (
	SkipOtherEvent   = "other_event"   // a tracepoint placemap does not model
	SkipUnknownEvent = "unknown_event" // an event id no format file describes
	SkipBadFormat    = "bad_format"    // a modelled event whose format lacks a usable field
	SkipMalformed    = "malformed"     // a record shorter than its format, or a bad string
	SkipDiscarded    = "discarded"     // a discarded (filtered) event left as padding
	SkipBadPage      = "bad_page"      // a page whose header or events could not be walked
)

// loc is a precomputed field locator inside a record.
type loc struct {
	off, size int
	signed    bool
	str       uint8 // 0 int, 1 char array, 2 __data_loc, 3 __rel_loc
	ok        bool
}

// compiled is the per-event-id decoding plan: offsets resolved once from the format.
type compiled struct {
	name    string
	kind    schema.Kind
	model   bool  // a kind placemap models
	bad     error // the format cannot be decoded (counted as bad_format)
	minSize int

	commonPid                                loc
	comm, nextComm, childComm, filename      loc
	pid, prio, target, orig, dest, prevState loc
	nextPid, nextPrio, childPid, oldPid      loc
}

// Stats counts what a decode saw. Keys of Skipped are the Skip* constants.
type Stats struct {
	EventsByKind [10]int
	Skipped      map[string]int
	Records      map[int32]int // data records per CPU (what the kernel's "entries" counts)
	Pages        int
	LostEvents   int64 // counts the kernel stored on pages
	LostUnknown  int   // pages flagged "missed events" without a stored count
	OutOfOrder   int
	Warnings     []string
}

func newStats() Stats {
	return Stats{Skipped: map[string]int{}, Records: map[int32]int{}}
}

func (s *Stats) warnf(format string, args ...any) {
	if len(s.Warnings) < 100 {
		s.Warnings = append(s.Warnings, fmt.Sprintf(format, args...))
	}
}

// Decoder turns ring-buffer pages into Events using one buffer's format files.
type Decoder struct {
	ph        PageHeader
	eh        EventHeader
	big       bool
	pageSize  int
	byID      []*compiled
	typeLoc   loc
	state     *StateFormatter
	Intern    *Interner
	Stats     Stats
	formatErr map[string]error
}

// Options tunes a Decoder for the capture's machine.
type Options struct {
	BigEndian bool
	// PageSize is the ring-buffer (sub-)page size; 0 means DataOffset+DataSize of
	// header_page.
	PageSize int
}

// NewDecoder compiles the formats. Formats of events placemap does not model only
// contribute their id (so their records are counted as other_event).
func NewDecoder(ph PageHeader, eh EventHeader, formats []*EventFormat, opt Options) (*Decoder, error) {
	d := &Decoder{ph: ph, eh: eh, big: opt.BigEndian, pageSize: opt.PageSize, Intern: NewInterner(), Stats: newStats(), formatErr: map[string]error{}}
	if d.pageSize == 0 {
		d.pageSize = ph.DataOffset + ph.DataSize
	}
	if d.pageSize <= ph.DataOffset {
		return nil, fmt.Errorf("%w: page size %d too small for data offset %d", ErrHeaderPage, d.pageSize, ph.DataOffset)
	}
	d.state, _ = NewStateFormatter("")
	maxID := 0
	for _, f := range formats {
		if f.ID > maxID {
			maxID = f.ID
		}
	}
	d.byID = make([]*compiled, maxID+1)
	haveType := false
	for _, f := range formats {
		if !haveType {
			if t := f.Field("common_type"); t != nil && t.IsInt() {
				d.typeLoc = loc{off: t.Offset, size: t.Size, ok: true}
				haveType = true
			}
		}
		c := d.compile(f)
		if c.bad != nil {
			d.formatErr[f.Name] = c.bad
			d.Stats.warnf("%s: %v", f.Name, c.bad)
		}
		d.byID[f.ID] = c
	}
	if !haveType {
		// Every kernel since 2.6.31 puts a u16 common_type first.
		d.typeLoc = loc{off: 0, size: 2, ok: true}
	}
	return d, nil
}

// FormatErrors returns the events whose format could not be used, by name.
func (d *Decoder) FormatErrors() map[string]error { return d.formatErr }

func (d *Decoder) compile(f *EventFormat) *compiled {
	c := &compiled{name: f.Name}
	kind, ok := kindByTracepoint[f.Name]
	if !ok || (f.System != "" && f.System != "sched") {
		return c
	}
	c.kind, c.model = kind, true
	var err error
	need := func(name string, str bool) loc {
		l, e := locate(f, name, str, true)
		if e != nil && err == nil {
			err = e
		}
		if l.ok && l.off+l.size > c.minSize {
			c.minSize = l.off + l.size
		}
		return l
	}
	opt := func(name string, str bool) loc {
		l, e := locate(f, name, str, false)
		if e != nil && err == nil {
			err = e
		}
		if l.ok && l.off+l.size > c.minSize {
			c.minSize = l.off + l.size
		}
		return l
	}
	c.commonPid = need("common_pid", false)
	switch kind {
	case schema.KindWakeupNew, schema.KindWaking, schema.KindWakeup:
		c.comm, c.pid, c.prio = need("comm", true), need("pid", false), opt("prio", false)
		c.target = opt("target_cpu", false)
	case schema.KindMigrate:
		c.comm, c.pid, c.prio = need("comm", true), need("pid", false), opt("prio", false)
		c.orig, c.dest = need("orig_cpu", false), need("dest_cpu", false)
	case schema.KindSwitch:
		c.comm, c.pid, c.prio = need("prev_comm", true), need("prev_pid", false), opt("prev_prio", false)
		c.prevState = need("prev_state", false)
		c.nextComm, c.nextPid, c.nextPrio = need("next_comm", true), need("next_pid", false), opt("next_prio", false)
		st, e := NewStateFormatter(f.PrintFmt)
		d.state = st
		if e != nil {
			d.Stats.warnf("sched_switch prev_state printed as a number: %v", e)
		}
	case schema.KindFork:
		c.comm, c.pid = need("parent_comm", true), need("parent_pid", false)
		c.childComm, c.childPid = need("child_comm", true), need("child_pid", false)
	case schema.KindExit:
		c.comm, c.pid, c.prio = need("comm", true), need("pid", false), opt("prio", false)
	case schema.KindExec:
		c.filename, c.pid, c.oldPid = need("filename", true), need("pid", false), opt("old_pid", false)
	}
	c.bad = err
	return c
}

// locate resolves a field to a locator, checking that its type is one the decoder
// can read (an integer of 1/2/4/8 bytes, or a char array / __data_loc string).
func locate(f *EventFormat, name string, str, required bool) (loc, error) {
	fd := f.Field(name)
	if fd == nil {
		if required {
			return loc{}, fmt.Errorf("%w: %s has no field %s", ErrFieldType, f.Name, name)
		}
		return loc{}, nil
	}
	if str {
		switch {
		case (fd.DataLoc || fd.RelLoc) && fd.Size == 4 && fd.IsString():
			k := uint8(2)
			if fd.RelLoc {
				k = 3
			}
			return loc{off: fd.Offset, size: 4, str: k, ok: true}, nil
		case !fd.DataLoc && !fd.RelLoc && fd.IsString() && fd.Size > 0:
			return loc{off: fd.Offset, size: fd.Size, str: 1, ok: true}, nil
		}
		return loc{}, fmt.Errorf("%w: %s.%s has type %q (size %d), not a string", ErrFieldType, f.Name, name, fd.Type, fd.Size)
	}
	if !fd.IsInt() {
		return loc{}, fmt.Errorf("%w: %s.%s has type %q (size %d), not an integer", ErrFieldType, f.Name, name, fd.Type, fd.Size)
	}
	return loc{off: fd.Offset, size: fd.Size, signed: fd.Signed, ok: true}, nil
}

func (d *Decoder) u16(b []byte) uint16 {
	if d.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (d *Decoder) u32(b []byte) uint32 {
	if d.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *Decoder) u64(b []byte) uint64 {
	if d.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// i32 reads an int-sized field: the little-endian 4-byte case inline, others via num.
func (d *Decoder) i32(rec []byte, l *loc) int32 {
	if l.size == 4 && !d.big {
		return int32(binary.LittleEndian.Uint32(rec[l.off:]))
	}
	return int32(d.num(rec, *l))
}

// num reads an integer field (the caller checked the record is long enough).
func (d *Decoder) num(rec []byte, l loc) int64 {
	switch l.size {
	case 4:
		v := d.u32(rec[l.off:])
		if l.signed {
			return int64(int32(v))
		}
		return int64(v)
	case 8:
		return int64(d.u64(rec[l.off:]))
	case 2:
		v := d.u16(rec[l.off:])
		if l.signed {
			return int64(int16(v))
		}
		return int64(v)
	case 1:
		if l.signed {
			return int64(int8(rec[l.off]))
		}
		return int64(rec[l.off])
	}
	return 0
}

// str reads a string field; ok is false when a dynamic string points outside rec.
func (d *Decoder) str(rec []byte, l loc) (string, bool) {
	switch l.str {
	case 1:
		if l.size == 16 {
			return d.Intern.Array16(rec[l.off : l.off+16]), true
		}
		return d.Intern.Bytes(rec[l.off : l.off+l.size]), true
	case 2, 3:
		v := d.u32(rec[l.off:])
		o, n := int(v&0xffff), int(v>>16)
		if l.str == 3 {
			o += l.off + l.size
		}
		if o+n > len(rec) {
			return "", false
		}
		return d.Intern.Bytes(rec[o : o+n]), true
	}
	return "", false
}

// PageSize is the size of one ring-buffer page of this capture.
func (d *Decoder) PageSize() int { return d.pageSize }

// fixAbsTS restores the top bits the kernel drops from absolute time stamps
// (rb_fix_abs_ts: only 59 bits are stored).
func fixAbsTS(abs, prev uint64) uint64 {
	const tsMSB = uint64(0xf8) << 56
	if prev&tsMSB != 0 {
		abs |= prev & tsMSB
		if abs < prev {
			abs += 1 << 59
		}
	}
	return abs
}

// DecodePage appends the modelled events of one page to out. A page that cannot be
// walked to its commit returns a named error with the events decoded before the fault.
func (d *Decoder) DecodePage(page []byte, cpu int32, out []Event) ([]Event, error) {
	out, recs, err := d.walk(page, cpu, out)
	if recs > 0 {
		d.Stats.Records[cpu] += recs
	}
	return out, err
}

func (d *Decoder) walk(page []byte, cpu int32, out []Event) (_ []Event, recs int, _ error) {
	ph := &d.ph
	if len(page) < ph.DataOffset {
		return out, recs, fmt.Errorf("%w: %d bytes, header needs %d", ErrTruncatedPage, len(page), ph.DataOffset)
	}
	d.Stats.Pages++
	ts := d.u64(page[ph.TimestampOffset:])
	var commit uint64
	if ph.CommitSize == 8 {
		commit = d.u64(page[ph.CommitOffset:])
	} else {
		commit = uint64(d.u32(page[ph.CommitOffset:]))
	}
	const (
		missedEvents = 1 << 31
		missedStored = 1 << 30
		commitMask   = 1<<27 - 1
	)
	size := int(uint32(commit) & commitMask)
	data := page[ph.DataOffset:]
	if size > len(data) || ph.DataOffset+size > d.pageSize {
		if ph.DataOffset+size <= d.pageSize {
			return out, recs, fmt.Errorf("%w: commit %d, %d data bytes present", ErrTruncatedPage, size, len(data))
		}
		return out, recs, fmt.Errorf("%w: commit %d, page data holds %d", ErrCommitTooLarge, size, d.pageSize-ph.DataOffset)
	}
	if commit&missedEvents != 0 {
		lost := int64(-1)
		if commit&missedStored != 0 && size+ph.CommitSize <= len(data) {
			if ph.CommitSize == 8 {
				lost = int64(d.u64(data[size:]))
			} else {
				lost = int64(d.u32(data[size:]))
			}
		}
		if lost < 0 {
			d.Stats.LostUnknown++
		} else {
			d.Stats.LostEvents += lost
		}
		d.Stats.EventsByKind[schema.KindLost]++
		out = append(out, Event{TsNs: int64(ts), CPU: cpu, Kind: schema.KindLost, LostEvents: lost})
	}
	data = data[:size]
	eh := &d.eh
	pos := 0
	for pos < size {
		if pos+4 > size {
			return out, recs, fmt.Errorf("%w: event header at %d past commit %d", ErrBadEvent, pos, size)
		}
		w := d.u32(data[pos:])
		var typeLen, delta uint32
		if d.big {
			typeLen, delta = w>>27, w&(1<<27-1)
		} else {
			typeLen, delta = w&31, w>>5
		}
		var rec []byte
		switch {
		case typeLen == eh.Padding:
			if delta == 0 {
				// The rest of the page is empty.
				return out, recs, nil
			}
			if pos+8 > size {
				return out, recs, fmt.Errorf("%w: padding at %d past commit", ErrBadEvent, pos)
			}
			n := int(d.u32(data[pos+4:]))
			if n < 4 || pos+4+n > size {
				return out, recs, fmt.Errorf("%w: padding length %d at %d", ErrBadEvent, n, pos)
			}
			// A discarded event: the kernel's reader does not add its delta.
			d.Stats.Skipped[SkipDiscarded]++
			pos += 4 + (n+3)&^3
			continue
		case typeLen == eh.TimeExtend || typeLen == eh.TimeStamp:
			if pos+8 > size {
				return out, recs, fmt.Errorf("%w: time stamp at %d past commit", ErrBadEvent, pos)
			}
			v := uint64(d.u32(data[pos+4:]))<<27 | uint64(delta)
			if typeLen == eh.TimeExtend {
				ts += v
			} else {
				ts = fixAbsTS(v, ts)
			}
			pos += 8
			continue
		case typeLen == 0:
			if pos+8 > size {
				return out, recs, fmt.Errorf("%w: long event at %d past commit", ErrBadEvent, pos)
			}
			n := int(d.u32(data[pos+4:]))
			if n < 4 || pos+4+n > size {
				return out, recs, fmt.Errorf("%w: event length %d at %d", ErrBadEvent, n, pos)
			}
			rec = data[pos+8 : pos+4+n]
			pos += 4 + (n+3)&^3
		case typeLen <= eh.DataMaxTypeLen:
			n := int(typeLen) * 4
			if pos+4+n > size {
				return out, recs, fmt.Errorf("%w: event length %d at %d past commit %d", ErrBadEvent, n, pos, size)
			}
			rec = data[pos+4 : pos+4+n]
			pos += 4 + n
		default:
			return out, recs, fmt.Errorf("%w: type_len %d at %d", ErrBadEvent, typeLen, pos)
		}
		ts += uint64(delta)
		recs++
		out = d.decodeRecord(rec, int64(ts), cpu, out)
	}
	return out, recs, nil
}

// decodeRecord appends the event for one data record, or counts why it was skipped.
func (d *Decoder) decodeRecord(rec []byte, ts int64, cpu int32, out []Event) []Event {
	if len(rec) < d.typeLoc.off+d.typeLoc.size {
		d.Stats.Skipped[SkipMalformed]++
		return out
	}
	id := d.num(rec, d.typeLoc)
	var c *compiled
	if id >= 0 && id < int64(len(d.byID)) { // an 8-byte common_type may read negative
		c = d.byID[id]
	}
	switch {
	case c == nil:
		d.Stats.Skipped[SkipUnknownEvent]++
		return out
	case !c.model:
		d.Stats.Skipped[SkipOtherEvent]++
		return out
	case c.bad != nil:
		d.Stats.Skipped[SkipBadFormat]++
		return out
	case len(rec) < c.minSize:
		d.Stats.Skipped[SkipMalformed]++
		return out
	}
	out = append(out, Event{TsNs: ts, CPU: cpu, Kind: c.kind})
	ev := &out[len(out)-1]
	ev.CurPid = d.i32(rec, &c.commonPid)
	ev.Pid = d.i32(rec, &c.pid)
	ok := true
	if c.comm.ok {
		ev.Comm, ok = d.str(rec, c.comm)
	}
	if c.prio.ok {
		ev.Prio, ev.HasPrio = d.i32(rec, &c.prio), true
	}
	switch c.kind {
	case schema.KindWakeupNew, schema.KindWaking, schema.KindWakeup:
		if c.target.ok {
			ev.TargetCPU, ev.HasTarget = d.i32(rec, &c.target), true
		}
	case schema.KindMigrate:
		ev.OrigCPU, ev.DestCPU = d.i32(rec, &c.orig), d.i32(rec, &c.dest)
	case schema.KindSwitch:
		ev.PrevState = d.state.Format(d.num(rec, c.prevState))
		ev.NextPid = d.i32(rec, &c.nextPid)
		var ok2 bool
		ev.NextComm, ok2 = d.str(rec, c.nextComm)
		ok = ok && ok2
		if c.nextPrio.ok {
			ev.NextPrio = d.i32(rec, &c.nextPrio)
		}
	case schema.KindFork:
		ev.ChildPid = d.i32(rec, &c.childPid)
		var ok2 bool
		ev.ChildComm, ok2 = d.str(rec, c.childComm)
		ok = ok && ok2
	case schema.KindExec:
		ev.Filename, ok = d.str(rec, c.filename)
		if c.oldPid.ok {
			ev.OldPid = d.i32(rec, &c.oldPid)
		} else {
			ev.OldPid = ev.Pid
		}
		// The exec tracepoint carries no comm; the kernel has just set it to the
		// file's base name (truncated to TASK_COMM_LEN-1 bytes).
		base := path.Base(ev.Filename)
		if len(base) > 15 {
			base = base[:15]
		}
		ev.Comm = d.Intern.Bytes([]byte(base))
	}
	if !ok {
		d.Stats.Skipped[SkipMalformed]++
		return out[:len(out)-1]
	}
	d.Stats.EventsByKind[c.kind]++
	return out
}

// SkippedTotal sums the skip counts.
func (s *Stats) SkippedTotal() int {
	n := 0
	for _, v := range s.Skipped {
		n += v
	}
	return n
}

// SortedCPUs returns the CPUs that recorded data records, ascending.
func (s *Stats) SortedCPUs() []int32 {
	cpus := make([]int32, 0, len(s.Records))
	for c := range s.Records {
		cpus = append(cpus, c)
	}
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	return cpus
}

// DecodeRecord appends the event of one record taken out of its ring-buffer page (a
// perf.data sample's raw tracepoint payload), or counts why it was skipped.
func (d *Decoder) DecodeRecord(rec []byte, ts int64, cpu int32, out []Event) []Event {
	d.Stats.Records[cpu]++
	return d.decodeRecord(rec, ts, cpu, out)
}

// NoteLost counts a loss that came as its own record (perf's PERF_RECORD_LOST).
func (d *Decoder) NoteLost(n int64) {
	if n < 0 {
		d.Stats.LostUnknown++
	} else {
		d.Stats.LostEvents += n
	}
}
