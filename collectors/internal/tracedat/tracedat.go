// Package tracedat reads trace-cmd `trace.dat` files (version 6, and version 7 with
// sections and zstd/zlib compression) and decodes their ring-buffer pages — the top
// buffer and every instance buffer — with the tracefs decoder, using the format files
// the trace.dat carries.
package tracedat

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"placemap/collectors/internal/tracefs"
)

// Magic starts every trace.dat file.
const Magic = "\x17\x08\x44tracing"

// Named errors.
var (
	ErrNotTraceDat = errors.New("tracedat: not a trace-cmd trace.dat file")
	ErrVersion     = errors.New("tracedat: unsupported trace.dat version")
	ErrTruncated   = errors.New("tracedat: file truncated")
	ErrCorrupt     = errors.New("tracedat: corrupt file")
	ErrCompression = errors.New("tracedat: unsupported compression")
	ErrNoInstance  = errors.New("tracedat: no such buffer")
)

// Option ids (trace-cmd's enum tracecmd_option_id).
const (
	optDone         = 0
	optDate         = 1
	optCPUStat      = 2
	optBuffer       = 3
	optTraceClock   = 4
	optUname        = 5
	optOffset       = 7
	optCPUCount     = 8
	optVersion      = 9
	optTSC2NSec     = 14
	optHeaderInfo   = 16
	optFtraceEvents = 17
	optEventFormats = 18
	optCmdlines     = 21
	optBufferText   = 22
)

// CPUData locates one CPU's pages of one buffer.
type CPUData struct {
	CPU  int
	Data []byte // the (decompressed) pages
}

// Buffer is the top buffer ("top") or an instance.
type Buffer struct {
	Name     string
	Clock    string
	PageSize int // the buffer's sub-buffer size when the file states it (v7), else 0
	CPUs     []CPUData
}

// File is a parsed trace.dat.
type File struct {
	Version     int
	BigEndian   bool
	LongSize    int
	PageSize    int
	Compression string
	PageHeader  tracefs.PageHeader
	EventHeader tracefs.EventHeader
	Formats     []*tracefs.EventFormat
	NrCPUs      int
	Clock       string
	Uname       string
	TraceCmd    string // trace-cmd version that wrote it
	TSOffset    int64  // OFFSET option: added to every timestamp
	CPUStats    []string
	Buffers     []Buffer
	Warnings    []string
	latency     bool
}

// rd is a bounds-checked cursor over the file (or a decompressed section).
type rd struct {
	b   []byte
	pos int
	bo  binary.ByteOrder
}

func (r *rd) need(n int) error {
	if n < 0 || r.pos+n > len(r.b) || r.pos+n < r.pos {
		return fmt.Errorf("%w: need %d bytes at %d of %d", ErrTruncated, n, r.pos, len(r.b))
	}
	return nil
}

func (r *rd) bytes(n int) ([]byte, error) {
	if err := r.need(n); err != nil {
		return nil, err
	}
	b := r.b[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

func (r *rd) u16() (uint16, error) {
	b, err := r.bytes(2)
	if err != nil {
		return 0, err
	}
	return r.bo.Uint16(b), nil
}

func (r *rd) u32() (uint32, error) {
	b, err := r.bytes(4)
	if err != nil {
		return 0, err
	}
	return r.bo.Uint32(b), nil
}

func (r *rd) u64() (uint64, error) {
	b, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return r.bo.Uint64(b), nil
}

func (r *rd) cstr() (string, error) {
	i := bytes.IndexByte(r.b[r.pos:], 0)
	if i < 0 {
		return "", fmt.Errorf("%w: unterminated string at %d", ErrTruncated, r.pos)
	}
	s := string(r.b[r.pos : r.pos+i])
	r.pos += i + 1
	return s, nil
}

// sized reads a size (4 or 8 bytes) then that many bytes.
func (r *rd) sized(width int) ([]byte, error) {
	var n uint64
	var err error
	if width == 8 {
		n, err = r.u64()
	} else {
		var v uint32
		v, err = r.u32()
		n = uint64(v)
	}
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)) {
		return nil, fmt.Errorf("%w: size %d at %d exceeds the file", ErrTruncated, n, r.pos)
	}
	return r.bytes(int(n))
}

// IsTraceDat tells whether the first bytes are a trace.dat magic.
func IsTraceDat(head []byte) bool { return bytes.HasPrefix(head, []byte(Magic)) }

// Open reads and parses a trace.dat file.
func Open(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse parses a whole trace.dat image.
func Parse(b []byte) (*File, error) {
	if !IsTraceDat(b) {
		return nil, ErrNotTraceDat
	}
	r := &rd{b: b, pos: len(Magic), bo: binary.LittleEndian}
	ver, err := r.cstr()
	if err != nil {
		return nil, err
	}
	f := &File{}
	if f.Version, err = strconv.Atoi(ver); err != nil {
		return nil, fmt.Errorf("%w: %q", ErrVersion, ver)
	}
	if f.Version < 6 || f.Version > 7 {
		return nil, fmt.Errorf("%w: %d (6 and 7 are read)", ErrVersion, f.Version)
	}
	if err := f.parseLayout(r); err != nil {
		return nil, err
	}
	if f.Version == 6 {
		err = f.parseV6(r)
	} else {
		err = f.parseV7(r)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// parseLayout reads what follows the version string: the endianness (r reads in it from
// then on), the size of a long and the page size.
func (f *File) parseLayout(r *rd) error {
	hb, err := r.bytes(2)
	if err != nil {
		return err
	}
	f.BigEndian, f.LongSize = hb[0] == 1, int(hb[1])
	if f.BigEndian {
		r.bo = binary.BigEndian
	}
	ps, err := r.u32()
	if err != nil {
		return err
	}
	f.PageSize = int(ps)
	if f.PageSize < 64 || f.PageSize > 1<<26 {
		return fmt.Errorf("%w: page size %d", ErrCorrupt, f.PageSize)
	}
	return nil
}

// parseFormats reads the header_page and header_event formats, ftrace's own event formats
// and the other systems' (a v6 file and perf's tracing data hold them in this order).
func (f *File) parseFormats(r *rd) error {
	if err := f.parseHeaders(r); err != nil {
		return err
	}
	if err := f.parseFtraceEvents(r); err != nil {
		return err
	}
	return f.parseEventFormats(r)
}

func (f *File) parseHeaders(r *rd) error {
	for _, want := range []string{"header_page", "header_event"} {
		name, err := r.cstr()
		if err != nil {
			return err
		}
		if name != want {
			return fmt.Errorf("%w: expected %s, found %q", ErrCorrupt, want, name)
		}
		text, err := r.sized(8)
		if err != nil {
			return err
		}
		if want == "header_page" {
			f.PageHeader, err = tracefs.ParseHeaderPage(string(text))
		} else {
			f.EventHeader, err = tracefs.ParseHeaderEvent(string(text))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *File) parseFtraceEvents(r *rd) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		text, err := r.sized(8)
		if err != nil {
			return err
		}
		// ftrace's own events (print, bprint, function...): parsed only so their
		// records count as other_event rather than unknown_event.
		if ef, err := tracefs.ParseEventFormat("ftrace", string(text)); err == nil {
			f.Formats = append(f.Formats, ef)
		}
	}
	return nil
}

func (f *File) parseEventFormats(r *rd) error {
	nsys, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < nsys; i++ {
		sys, err := r.cstr()
		if err != nil {
			return err
		}
		n, err := r.u32()
		if err != nil {
			return err
		}
		for j := uint32(0); j < n; j++ {
			text, err := r.sized(8)
			if err != nil {
				return err
			}
			ef, err := tracefs.ParseEventFormat(sys, string(text))
			if err != nil {
				f.Warnings = append(f.Warnings, fmt.Sprintf("event format in %s: %v", sys, err))
				continue
			}
			f.Formats = append(f.Formats, ef)
		}
	}
	return nil
}

func (f *File) parseV6(r *rd) error {
	if err := f.parseFormats(r); err != nil {
		return err
	}
	if _, err := r.sized(4); err != nil { // kallsyms
		return err
	}
	if _, err := r.sized(4); err != nil { // printk formats
		return err
	}
	if _, err := r.sized(8); err != nil { // saved cmdlines
		return err
	}
	cpus, err := r.u32()
	if err != nil {
		return err
	}
	if cpus > 1<<16 {
		return fmt.Errorf("%w: %d cpus", ErrCorrupt, cpus)
	}
	f.NrCPUs = int(cpus)
	type inst struct {
		name string
		off  uint64
	}
	var insts []inst
	for {
		tag, err := r.bytes(10)
		if err != nil {
			return err
		}
		switch strings.TrimRight(string(tag), " \x00") {
		case "options":
			for {
				id, err := r.u16()
				if err != nil {
					return err
				}
				if id == optDone {
					break
				}
				data, err := r.sized(4)
				if err != nil {
					return err
				}
				if id == optBuffer {
					if len(data) < 9 {
						return fmt.Errorf("%w: short BUFFER option", ErrCorrupt)
					}
					name := string(bytes.TrimRight(data[8:], "\x00"))
					insts = append(insts, inst{name, r.bo.Uint64(data)})
					continue
				}
				f.option(id, data, r.bo)
			}
			continue
		case "latency":
			f.latency = true
			return fmt.Errorf("%w: latency-format trace.dat (text, not ring-buffer pages)", ErrVersion)
		case "flyrecord":
		default:
			return fmt.Errorf("%w: unexpected section %q", ErrCorrupt, tag)
		}
		break
	}
	top, err := f.cpuTable(r, "top", f.Clock)
	if err != nil {
		return err
	}
	f.Buffers = append(f.Buffers, top)
	for _, in := range insts {
		if in.off > uint64(len(r.b)) {
			return fmt.Errorf("%w: buffer %q offset %d", ErrTruncated, in.name, in.off)
		}
		ir := &rd{b: r.b, pos: int(in.off), bo: r.bo}
		tag, err := ir.bytes(10)
		if err != nil {
			return err
		}
		if strings.TrimRight(string(tag), " \x00") != "flyrecord" {
			return fmt.Errorf("%w: buffer %q has %q, not flyrecord", ErrCorrupt, in.name, tag)
		}
		b, err := f.cpuTable(ir, in.name, f.Clock)
		if err != nil {
			return err
		}
		f.Buffers = append(f.Buffers, b)
	}
	return nil
}

// cpuTable reads v6's per-CPU (offset, size) table.
func (f *File) cpuTable(r *rd, name, clock string) (Buffer, error) {
	b := Buffer{Name: name, Clock: clock}
	for cpu := 0; cpu < f.NrCPUs; cpu++ {
		off, err := r.u64()
		if err != nil {
			return b, err
		}
		size, err := r.u64()
		if err != nil {
			return b, err
		}
		if off > uint64(len(r.b)) || size > uint64(len(r.b))-off {
			return b, fmt.Errorf("%w: buffer %q cpu %d data [%d,+%d) beyond the file (%d bytes)", ErrTruncated, name, cpu, off, size, len(r.b))
		}
		if size > 0 {
			b.CPUs = append(b.CPUs, CPUData{CPU: cpu, Data: r.b[off : off+size]})
		}
	}
	return b, nil
}

// option records the facts of one option this decoder uses.
func (f *File) option(id uint16, data []byte, bo binary.ByteOrder) {
	str := func() string { return string(bytes.TrimRight(data, "\x00")) }
	switch id {
	case optTraceClock:
		f.Clock = tracefsClock(str())
	case optUname:
		f.Uname = str()
	case optVersion:
		f.TraceCmd = str()
	case optCPUStat:
		f.CPUStats = append(f.CPUStats, str())
	case optCPUCount:
		if len(data) >= 4 && f.NrCPUs == 0 {
			f.NrCPUs = int(bo.Uint32(data))
		}
	case optOffset:
		if v, err := strconv.ParseInt(strings.TrimSpace(str()), 0, 64); err == nil {
			f.TSOffset += v
		}
	case optTSC2NSec:
		f.Warnings = append(f.Warnings, "TSC2NSEC option present: timestamps are left in TSC cycles")
	case optDate:
		// trace-cmd report ignores DATE unless --date is given; so do we.
	}
}

func tracefsClock(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// --- version 7 ---

type decompressor func(dst, src []byte) ([]byte, error)

func (f *File) decompressor() (decompressor, error) {
	switch f.Compression {
	case "", "none":
		return nil, nil
	case "zstd":
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return func(dst, src []byte) ([]byte, error) { return dec.DecodeAll(src, dst) }, nil
	case "zlib":
		return func(dst, src []byte) ([]byte, error) {
			zr, err := zlib.NewReader(bytes.NewReader(src))
			if err != nil {
				return nil, err
			}
			defer func() { _ = zr.Close() }()
			buf := bytes.NewBuffer(dst)
			_, err = io.Copy(buf, zr)
			return buf.Bytes(), err
		}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrCompression, f.Compression)
}

// section reads the v7 section header at off and returns its (decompressed) content.
func (f *File) section(b []byte, bo binary.ByteOrder, off uint64, wantID uint16, dec decompressor) ([]byte, error) {
	if off > uint64(len(b)) {
		return nil, fmt.Errorf("%w: section offset %d", ErrTruncated, off)
	}
	r := &rd{b: b, pos: int(off), bo: bo}
	id, err := r.u16()
	if err != nil {
		return nil, err
	}
	flags, err := r.u16()
	if err != nil {
		return nil, err
	}
	if _, err := r.u32(); err != nil { // description string id
		return nil, err
	}
	size, err := r.u64()
	if err != nil {
		return nil, err
	}
	if id != wantID {
		return nil, fmt.Errorf("%w: section %d at %d, expected %d", ErrCorrupt, id, off, wantID)
	}
	if size > uint64(len(b)-r.pos) {
		return nil, fmt.Errorf("%w: section %d size %d", ErrTruncated, id, size)
	}
	content := b[r.pos : r.pos+int(size)]
	if flags&1 == 0 {
		return content, nil
	}
	if dec == nil {
		return nil, fmt.Errorf("%w: compressed section in a file without compression", ErrCorrupt)
	}
	cr := &rd{b: content, bo: bo}
	csize, err := cr.u32()
	if err != nil {
		return nil, err
	}
	usize, err := cr.u32()
	if err != nil {
		return nil, err
	}
	comp, err := cr.bytes(int(csize))
	if err != nil {
		return nil, err
	}
	if usize > 1<<30 {
		return nil, fmt.Errorf("%w: section %d claims %d bytes uncompressed", ErrCorrupt, id, usize)
	}
	// Pre-size for the stated length, within reason: a hostile header must not make
	// us allocate a gigabyte up front.
	out, err := dec(make([]byte, 0, min(usize, 16<<20)), comp)
	if err != nil {
		return nil, fmt.Errorf("%w: section %d: %v", ErrCorrupt, id, err)
	}
	return out, nil
}

// chunks decompresses v7 flyrecord CPU data: u32 count, then (u32 csize, u32 usize, data).
func chunks(data []byte, bo binary.ByteOrder, dec decompressor) ([]byte, error) {
	r := &rd{b: data, bo: bo}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	var out []byte
	for i := uint32(0); i < n; i++ {
		csize, err := r.u32()
		if err != nil {
			return nil, err
		}
		usize, err := r.u32()
		if err != nil {
			return nil, err
		}
		comp, err := r.bytes(int(csize))
		if err != nil {
			return nil, err
		}
		if usize > 1<<30 || uint64(len(out))+uint64(usize) > 1<<34 {
			return nil, fmt.Errorf("%w: chunk claims %d bytes", ErrCorrupt, usize)
		}
		start := len(out)
		out, err = dec(out, comp)
		if err != nil {
			return nil, fmt.Errorf("%w: chunk %d: %v", ErrCorrupt, i, err)
		}
		if len(out)-start != int(usize) {
			return nil, fmt.Errorf("%w: chunk %d decompressed to %d bytes, header says %d", ErrCorrupt, i, len(out)-start, usize)
		}
	}
	return out, nil
}

func (f *File) parseV7(r *rd) error {
	var err error
	if f.Compression, err = r.cstr(); err != nil {
		return err
	}
	if _, err = r.cstr(); err != nil { // compression version
		return err
	}
	dec, err := f.decompressor()
	if err != nil {
		return err
	}
	next, err := r.u64()
	if err != nil {
		return err
	}
	type bufOpt struct {
		data []byte
	}
	var bufs []bufOpt
	var headerOff, eventsOff, ftraceOff uint64
	haveHeader, haveEvents, haveFtrace := false, false, false
	seen := map[uint64]bool{}
	for next != 0 {
		if seen[next] {
			return fmt.Errorf("%w: options sections loop at %d", ErrCorrupt, next)
		}
		seen[next] = true
		opts, err := f.section(r.b, r.bo, next, optDone, dec)
		if err != nil {
			return err
		}
		or := &rd{b: opts, bo: r.bo}
		next = 0
		for or.pos < len(or.b) {
			id, err := or.u16()
			if err != nil {
				return err
			}
			data, err := or.sized(4)
			if err != nil {
				return err
			}
			switch id {
			case optDone:
				if len(data) >= 8 {
					next = r.bo.Uint64(data)
				}
				or.pos = len(or.b)
			case optBuffer:
				bufs = append(bufs, bufOpt{data})
			case optHeaderInfo:
				if len(data) >= 8 {
					headerOff, haveHeader = r.bo.Uint64(data), true
				}
			case optEventFormats:
				if len(data) >= 8 {
					eventsOff, haveEvents = r.bo.Uint64(data), true
				}
			case optFtraceEvents:
				if len(data) >= 8 {
					ftraceOff, haveFtrace = r.bo.Uint64(data), true
				}
			case optBufferText:
				f.Warnings = append(f.Warnings, "latency (text) buffer skipped")
			default:
				f.option(id, data, r.bo)
			}
		}
	}
	if !haveHeader || !haveEvents {
		return fmt.Errorf("%w: no header info or event formats section", ErrCorrupt)
	}
	hdr, err := f.section(r.b, r.bo, headerOff, optHeaderInfo, dec)
	if err != nil {
		return err
	}
	if err := f.parseHeaders(&rd{b: hdr, bo: r.bo}); err != nil {
		return err
	}
	if haveFtrace {
		fe, err := f.section(r.b, r.bo, ftraceOff, optFtraceEvents, dec)
		if err != nil {
			return err
		}
		if err := f.parseFtraceEvents(&rd{b: fe, bo: r.bo}); err != nil {
			return err
		}
	}
	evs, err := f.section(r.b, r.bo, eventsOff, optEventFormats, dec)
	if err != nil {
		return err
	}
	if err := f.parseEventFormats(&rd{b: evs, bo: r.bo}); err != nil {
		return err
	}
	for _, bo := range bufs {
		br := &rd{b: bo.data, bo: r.bo}
		if _, err := br.u64(); err != nil { // the flyrecord section; CPU offsets below are absolute
			return err
		}
		name, err := br.cstr()
		if err != nil {
			return err
		}
		clock, err := br.cstr()
		if err != nil {
			return err
		}
		if name == "" {
			name = "top"
		}
		// trace-cmd >= 3.2 writes the sub-buffer page size here; 3.1 does not. The
		// remaining length tells which: 4 + n*20 bytes (+4 with a page size).
		rest := len(br.b) - br.pos
		subbuf := 0
		if rest >= 8 && (rest-8)%20 == 0 {
			v, err := br.u32()
			if err != nil {
				return err
			}
			subbuf = int(v)
		}
		n, err := br.u32()
		if err != nil {
			return err
		}
		b := Buffer{Name: name, Clock: clock}
		if subbuf >= 64 && subbuf <= 1<<26 {
			b.PageSize = subbuf
		}
		for i := uint32(0); i < n; i++ {
			cpu, err := br.u32()
			if err != nil {
				return err
			}
			off, err := br.u64()
			if err != nil {
				return err
			}
			size, err := br.u64()
			if err != nil {
				return err
			}
			if off > uint64(len(r.b)) || size > uint64(len(r.b))-off {
				return fmt.Errorf("%w: buffer %q cpu %d data beyond the file", ErrTruncated, name, cpu)
			}
			if size == 0 {
				continue
			}
			data := r.b[off : off+size]
			if dec != nil {
				// The recorded size counts the chunks but not their leading count.
				end := min(off+size+4, uint64(len(r.b)))
				if data, err = chunks(r.b[off:end], r.bo, dec); err != nil {
					return fmt.Errorf("buffer %q cpu %d: %w", name, cpu, err)
				}
			}
			b.CPUs = append(b.CPUs, CPUData{CPU: int(cpu), Data: data})
			if int(cpu) >= f.NrCPUs {
				f.NrCPUs = int(cpu) + 1
			}
		}
		f.Buffers = append(f.Buffers, b)
	}
	if f.Clock == "" && len(f.Buffers) > 0 {
		f.Clock = f.Buffers[0].Clock
	}
	return nil
}

// ParseTracingData parses the tracing data that perf.data's HEADER_TRACING_DATA section
// holds: the start of a trace.dat (magic, a version string such as "0.6", endianness,
// long size, page size, header_page, header_event, ftrace's and the other systems' event
// formats). What follows there (kallsyms, printk formats, saved cmdlines) is not read.
func ParseTracingData(b []byte) (*File, error) {
	if !IsTraceDat(b) {
		return nil, ErrNotTraceDat
	}
	r := &rd{b: b, pos: len(Magic), bo: binary.LittleEndian}
	if _, err := r.cstr(); err != nil {
		return nil, err
	}
	f := &File{}
	if err := f.parseLayout(r); err != nil {
		return nil, err
	}
	if err := f.parseFormats(r); err != nil {
		return nil, err
	}
	return f, nil
}
