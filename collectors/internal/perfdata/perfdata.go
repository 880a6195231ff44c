// Package perfdata reads the perf.data files `perf record -e 'sched:*'` writes (the
// "PERFILE2" format of tools/perf/Documentation/perf.data-file-format.txt): the header's
// event attributes, the tracing data feature section (the tracepoints' formats, as a
// trace.dat starts) and the PERF_RECORD_SAMPLE records, whose raw payloads are the
// tracepoints' records and are decoded by internal/tracefs into the events of
// schemas/events.json; PERF_RECORD_LOST records become lost rows. The samples are
// handed on in timestamp order (perf writes them in rounds, not sorted), equal
// timestamps in file order, as `perf script` prints them.
package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"placemap/collectors/internal/mapfile"
	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracedat"
	"placemap/collectors/internal/tracefs"
)

// Magic opens a perf.data file written on a little-endian machine.
const Magic = "PERFILE2"

var (
	// ErrNotPerfData: the input does not start with the magic.
	ErrNotPerfData = errors.New("perfdata: not a perf.data file (no PERFILE2 magic)")
	// ErrCorrupt: a header, section or record points outside the file or is malformed.
	ErrCorrupt = errors.New("perfdata: corrupt file")
	// ErrNoTracingData: the file has no tracepoint formats (recorded without tracepoints).
	ErrNoTracingData = errors.New("perfdata: no tracing data section: record sched tracepoints (perf record -e 'sched:*')")
	// ErrPipeMode: written to a pipe (perf record -o -), its attributes and formats are records.
	ErrPipeMode = errors.New("perfdata: a perf.data written to a pipe (perf record -o -) is not read: record to a file, or convert it with `perf script -i FILE > FILE.txt`")
	// ErrDirFormat: a directory's data file (perf record --threads), whose samples are in its data.N files.
	ErrDirFormat = errors.New("perfdata: a perf.data directory's file (perf record --threads) is not read: record without --threads, or convert it with `perf script -i DIR > FILE.txt`")
	// ErrCompressed: its records are zstd-compressed (perf record -z).
	ErrCompressed = errors.New("perfdata: compressed records (perf record -z) are not read: record without -z, or convert it with `perf script -i FILE > FILE.txt`")
)

// record types and sample_type bits (include/uapi/linux/perf_event.h)
const (
	recordLost        = 2
	recordSample      = 9
	recordCompressed  = 81
	recordCompressed2 = 83

	typeTracepoint = 2

	sampleIP         = 1 << 0
	sampleTID        = 1 << 1
	sampleTime       = 1 << 2
	sampleAddr       = 1 << 3
	sampleRead       = 1 << 4
	sampleCallchain  = 1 << 5
	sampleID         = 1 << 6
	sampleCPU        = 1 << 7
	samplePeriod     = 1 << 8
	sampleStreamID   = 1 << 9
	sampleRaw        = 1 << 10
	sampleIdentifier = 1 << 16

	formatTotalTimeEnabled = 1 << 0
	formatTotalTimeRunning = 1 << 1
	formatID               = 1 << 2
	formatGroup            = 1 << 3
	formatLost             = 1 << 4

	featTracingData = 1
	featHostname    = 3
	featOSRelease   = 4
	featVersion     = 5
	featArch        = 6
	featNrCPUs      = 7
	featDirFormat   = 24
	featCompressed  = 27
)

// IsPerfData tells whether the first bytes are the perf.data magic.
func IsPerfData(head []byte) bool { return strings.HasPrefix(string(head), Magic) }

type attr struct {
	typ         uint32
	sampleType  uint64
	readFormat  uint64
	sampleIDAll bool
}

// File is a parsed perf.data image.
type File struct {
	b        []byte
	attrs    []attr
	byID     map[uint64]int
	data     [2]uint64 // offset, size
	features map[int][]byte
	tracing  *tracedat.File
	warnings []string
}

var le = binary.LittleEndian

func section(b []byte, off int) ([2]uint64, error) {
	if off+16 > len(b) {
		return [2]uint64{}, fmt.Errorf("%w: section table at %d past the end", ErrCorrupt, off)
	}
	s := [2]uint64{le.Uint64(b[off:]), le.Uint64(b[off+8:])}
	if s[0] > uint64(len(b)) || s[1] > uint64(len(b))-s[0] {
		return s, fmt.Errorf("%w: section %d+%d past the end (%d bytes)", ErrCorrupt, s[0], s[1], len(b))
	}
	return s, nil
}

// Parse parses the header, the attributes and the feature sections of a perf.data image.
func Parse(b []byte) (*File, error) {
	if !IsPerfData(b) {
		return nil, ErrNotPerfData
	}
	if len(b) >= 16 && le.Uint64(b[8:]) == 16 {
		return nil, ErrPipeMode // a pipe's header is the magic and its own size only
	}
	if len(b) < 104 {
		return nil, fmt.Errorf("%w: header cut short (%d bytes)", ErrCorrupt, len(b))
	}
	f := &File{b: b, byID: map[uint64]int{}, features: map[int][]byte{}}
	attrSize := le.Uint64(b[16:])
	attrs, err := section(b, 24)
	if err != nil {
		return nil, err
	}
	if f.data, err = section(b, 40); err != nil {
		return nil, err
	}
	if attrSize < 16+64 || attrSize > 1<<16 {
		return nil, fmt.Errorf("%w: attribute size %d", ErrCorrupt, attrSize)
	}
	idBytes := uint64(0)
	for off := attrs[0]; off+attrSize <= attrs[0]+attrs[1]; off += attrSize {
		a := b[off : off+attrSize]
		at := attr{
			typ:         le.Uint32(a[0:]),
			sampleType:  le.Uint64(a[24:]),
			readFormat:  le.Uint64(a[32:]),
			sampleIDAll: le.Uint64(a[40:])&(1<<18) != 0,
		}
		ids, err := section(b, int(off+attrSize-16))
		if err != nil {
			return nil, err
		}
		// every id section within the file, and all of them together no bigger than it (a crafted
		// file pointing many attributes at one large region would take minutes to walk)
		idBytes += ids[1]
		if idBytes > uint64(len(b)) {
			return nil, fmt.Errorf("%w: the attributes' id sections add up to more than the file", ErrCorrupt)
		}
		for i := ids[0]; i+8 <= ids[0]+ids[1]; i += 8 {
			f.byID[le.Uint64(b[i:])] = len(f.attrs)
		}
		f.attrs = append(f.attrs, at)
	}
	if len(f.attrs) == 0 {
		return nil, fmt.Errorf("%w: no event attributes", ErrCorrupt)
	}
	// feature sections follow the data, one per bit set in the header's bitmap, in order
	next := int(f.data[0] + f.data[1])
	for bit := 0; bit < 256; bit++ {
		if b[72+bit/8]&(1<<(bit%8)) == 0 {
			continue
		}
		s, err := section(b, next)
		next += 16
		if err != nil {
			if bit == featTracingData {
				return nil, err
			}
			// a feature this reader does not need (perf skips a bad one too)
			f.warnings = append(f.warnings, fmt.Sprintf("header feature %d not read: %v", bit, err))
			continue
		}
		f.features[bit] = b[s[0] : s[0]+s[1]]
	}
	if _, dir := f.features[featDirFormat]; dir {
		return nil, ErrDirFormat
	}
	if _, z := f.features[featCompressed]; z {
		return nil, ErrCompressed
	}
	td, ok := f.features[featTracingData]
	if !ok {
		return nil, ErrNoTracingData
	}
	if f.tracing, err = tracedat.ParseTracingData(td); err != nil {
		return nil, fmt.Errorf("perfdata: tracing data: %w", err)
	}
	return f, nil
}

// headerString reads a feature section holding a perf_header_string (u32 length, then
// the NUL-padded text).
func (f *File) headerString(bit int) string {
	s := f.features[bit]
	if len(s) < 4 {
		return ""
	}
	n := int(le.Uint32(s))
	if n > len(s)-4 {
		n = len(s) - 4
	}
	return strings.TrimRight(string(s[4:4+n]), "\x00")
}

// sample is what a record's fields give: when, where, and the raw payload.
type sample struct {
	attr      int
	time      uint64
	cpu       int32
	raw       []byte
	hasTime   bool
	hasCPU    bool
	hasRawOff bool
}

// attrOf finds the attribute a sample (or a record's sample_id trailer, when trailer)
// belongs to: by its IDENTIFIER, by its ID field, or the only attribute there is.
func (f *File) attrOf(rec []byte, trailer bool) (int, bool) {
	if len(f.attrs) == 1 {
		return 0, true
	}
	st := f.attrs[0].sampleType
	switch {
	case st&sampleIdentifier != 0 && len(rec) >= 8:
		off := 0
		if trailer {
			off = len(rec) - 8
		}
		i, ok := f.byID[le.Uint64(rec[off:])]
		return i, ok
	case st&sampleID != 0:
		// a sample's ID follows IP, TID, TIME and ADDR; a trailer's ID precedes STREAM_ID and CPU
		// at its end (perf requires the same layout of every event's id, so the first's serves)
		off := 0
		for _, bit := range []uint64{sampleIP, sampleTID, sampleTime, sampleAddr} {
			if !trailer && st&bit != 0 {
				off += 8
			}
		}
		if trailer {
			off = len(rec) - 8
			for _, bit := range []uint64{sampleStreamID, sampleCPU} {
				if st&bit != 0 {
					off -= 8
				}
			}
		}
		if off < 0 || off+8 > len(rec) {
			return 0, false
		}
		i, ok := f.byID[le.Uint64(rec[off:])]
		return i, ok
	}
	return 0, false
}

// readSize is the size of a sample's READ field (perf_event.h's read_format layouts).
func readSize(rf uint64, rec []byte, off int) (int, bool) {
	per := 8
	if rf&formatID != 0 {
		per += 8
	}
	if rf&formatLost != 0 {
		per += 8
	}
	head := 0
	for _, bit := range []uint64{formatTotalTimeEnabled, formatTotalTimeRunning} {
		if rf&bit != 0 {
			head += 8
		}
	}
	if rf&formatGroup == 0 {
		return head + per, true
	}
	if off+8 > len(rec) {
		return 0, false
	}
	nr := le.Uint64(rec[off:])
	if nr > uint64(len(rec)) {
		return 0, false
	}
	return 8 + head + int(nr)*per, true
}

// parseSample reads a PERF_RECORD_SAMPLE's fields in perf_event.h's order.
func (f *File) parseSample(rec []byte) (sample, bool) {
	ai, ok := f.attrOf(rec, false)
	if !ok {
		return sample{}, false
	}
	a := f.attrs[ai]
	s := sample{attr: ai}
	off := 0
	u64 := func() (uint64, bool) {
		if off+8 > len(rec) {
			return 0, false
		}
		v := le.Uint64(rec[off:])
		off += 8
		return v, true
	}
	st := a.sampleType
	if st&sampleIdentifier != 0 {
		if _, ok := u64(); !ok {
			return s, false
		}
	}
	if st&sampleIP != 0 {
		if _, ok := u64(); !ok {
			return s, false
		}
	}
	if st&sampleTID != 0 { // the running task is the raw record's common_pid too
		if _, ok := u64(); !ok {
			return s, false
		}
	}
	if st&sampleTime != 0 {
		if s.time, ok = u64(); !ok {
			return s, false
		}
		s.hasTime = true
	}
	for _, bit := range []uint64{sampleAddr, sampleID, sampleStreamID} {
		if st&bit != 0 {
			if _, ok := u64(); !ok {
				return s, false
			}
		}
	}
	if st&sampleCPU != 0 {
		v, ok := u64()
		if !ok {
			return s, false
		}
		s.cpu, s.hasCPU = int32(uint32(v)), true
	}
	if st&samplePeriod != 0 {
		if _, ok := u64(); !ok {
			return s, false
		}
	}
	if st&sampleRead != 0 {
		n, ok := readSize(a.readFormat, rec, off)
		if !ok || off+n > len(rec) {
			return s, false
		}
		off += n
	}
	if st&sampleCallchain != 0 {
		nr, ok := u64()
		if !ok || nr > uint64(len(rec)-off)/8 {
			return s, false
		}
		off += int(nr) * 8
	}
	if st&sampleRaw != 0 {
		if off+4 > len(rec) {
			return s, false
		}
		n32 := uint64(le.Uint32(rec[off:]))
		off += 4
		if n32 > uint64(len(rec)-off) {
			return s, false
		}
		n := int(n32)
		s.raw, s.hasRawOff = rec[off:off+n], true
	}
	return s, true
}

// lostAt reads the cpu and time of a record's sample_id trailer (TID, TIME, ID,
// STREAM_ID, CPU, IDENTIFIER: those the attribute samples), from the record's end, as
// perf parses it.
func (f *File) lostAt(rec []byte) (cpu int32, ts uint64, hasCPU, hasTime bool) {
	ai, ok := f.attrOf(rec, true)
	if !ok || !f.attrs[ai].sampleIDAll {
		return -1, 0, false, false
	}
	st := f.attrs[ai].sampleType
	end := len(rec)
	back := func() (uint64, bool) {
		if end-8 < 16 { // the trailer follows the record's id and count
			return 0, false
		}
		end -= 8
		return le.Uint64(rec[end:]), true
	}
	cpu = -1
	for _, bit := range []uint64{sampleIdentifier, sampleCPU, sampleStreamID, sampleID, sampleTime} {
		if st&bit == 0 {
			continue
		}
		v, ok := back()
		if !ok {
			return cpu, ts, hasCPU, hasTime
		}
		switch bit {
		case sampleCPU:
			cpu, hasCPU = int32(uint32(v)), true
		case sampleTime:
			ts, hasTime = v, true
		}
	}
	return cpu, ts, hasCPU, hasTime
}

// Decode reads the perf.data at path and hands its sched events to sink in timestamp order.
// The file is mapped, not read onto the heap (internal/mapfile), and released on return.
func Decode(path string, sink tracefs.Sink) (*tracefs.Result, error) {
	return mapfile.With(path, func(b []byte) (*tracefs.Result, error) {
		f, err := Parse(b)
		if err != nil {
			return nil, err
		}
		return f.Decode(sink)
	})
}

// Decode decodes a parsed file's samples.
func (f *File) Decode(sink tracefs.Sink) (*tracefs.Result, error) {
	td := f.tracing
	d, err := tracefs.NewDecoder(td.PageHeader, td.EventHeader, td.Formats, tracefs.Options{BigEndian: td.BigEndian, PageSize: td.PageSize})
	if err != nil {
		return nil, err
	}
	res := &tracefs.Result{Format: "perfdata", TraceClock: "perf", Header: map[string]any{}}
	if v := f.headerString(featVersion); v != "" {
		res.Header["perf_version"] = v
	}
	if r := f.headerString(featOSRelease); r != "" {
		res.KernelRelease = r
		res.Header["kernel_release"] = r
	}
	for bit, key := range map[int]string{featHostname: "hostname", featArch: "arch"} {
		if v := f.headerString(bit); v != "" {
			res.Header[key] = v
		}
	}
	if s := f.features[featNrCPUs]; len(s) >= 8 {
		res.NrCPUs = int(le.Uint32(s[0:])) // nr_cpus_avail (the highest present CPU + 1), then nr_cpus_online
	}
	b := f.b
	end := f.data[0] + f.data[1]
	// the events are held for the sort: counted first, so the slice is made once
	n := 0
	for p := f.data[0]; p+8 <= end; {
		size := uint64(le.Uint16(b[p+6:]))
		if size < 8 {
			break
		}
		switch le.Uint32(b[p:]) {
		case recordSample, recordLost:
			n++
		case recordCompressed, recordCompressed2:
			return nil, ErrCompressed
		}
		p += size
	}
	events := make([]tracefs.Event, 0, n)
	other := 0
	lastTime := uint64(0)
	for p := f.data[0]; p < end; {
		if p+8 > end {
			d.Stats.Skipped[tracefs.SkipMalformed]++
			d.Stats.Warnings = append(d.Stats.Warnings, fmt.Sprintf("a record header cut short at byte %d", p))
			break
		}
		typ, size := le.Uint32(b[p:]), uint64(le.Uint16(b[p+6:]))
		if size < 8 || p+size > end {
			d.Stats.Skipped[tracefs.SkipMalformed]++
			d.Stats.Warnings = append(d.Stats.Warnings, fmt.Sprintf("a record of %d bytes at byte %d runs past the data section: the rest is not read", size, p))
			break
		}
		rec := b[p+8 : p+size]
		p += size
		switch typ {
		case recordSample:
			s, ok := f.parseSample(rec)
			switch {
			case !ok || !s.hasTime || !s.hasCPU:
				d.Stats.Skipped[tracefs.SkipMalformed]++
			case f.attrs[s.attr].typ != typeTracepoint || !s.hasRawOff:
				other++
			default:
				lastTime = max(lastTime, s.time)
				events = d.DecodeRecord(s.raw, int64(s.time), s.cpu, events)
			}
		case recordLost:
			if len(rec) < 16 {
				d.Stats.Skipped[tracefs.SkipMalformed]++
				continue
			}
			n := int64(le.Uint64(rec[8:]))
			cpu, ts, _, hasTime := f.lostAt(rec)
			if !hasTime {
				ts = lastTime
			}
			d.NoteLost(n)
			events = append(events, tracefs.Event{TsNs: int64(ts), CPU: cpu, Kind: schema.KindLost, LostEvents: n})
		}
	}
	if other > 0 {
		d.Stats.Skipped[tracefs.SkipOtherEvent] += other
	}
	// perf writes samples in rounds per CPU buffer: sort by time, ties in file order
	sort.SliceStable(events, func(i, j int) bool { return events[i].TsNs < events[j].TsNs })
	s := tracefs.Track(sink, res)
	for i := range events {
		if err := s.Add(&events[i]); err != nil {
			return nil, err
		}
	}
	res.Finish(d)
	res.Stats.Warnings = append(append(append([]string(nil), f.warnings...), f.tracing.Warnings...), res.Stats.Warnings...)
	return res, nil
}
