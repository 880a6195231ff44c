// Package tracefs decodes the Linux ftrace ring buffer: the kernel's format files
// (events/header_page, events/header_event, events/<system>/<event>/format) and the
// binary pages read from per_cpu/cpuN/trace_pipe_raw, into placemap schema events.
//
// Nothing here hard-codes a field offset: every layout comes from the format files the
// capture (or trace.dat) carries, so one decoder serves any kernel that wrote them.
package tracefs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Named errors, so callers can tell bad input apart (errors.Is).
var (
	ErrFormat         = errors.New("tracefs: malformed format file")
	ErrFieldType      = errors.New("tracefs: unsupported field type")
	ErrHeaderPage     = errors.New("tracefs: malformed header_page")
	ErrHeaderEvent    = errors.New("tracefs: unsupported header_event")
	ErrTruncatedPage  = errors.New("tracefs: truncated page")
	ErrCommitTooLarge = errors.New("tracefs: page commit size larger than the page")
	ErrBadEvent       = errors.New("tracefs: malformed ring-buffer event")
)

// Field is one field of an event record as a format file describes it.
type Field struct {
	Name     string
	Type     string // the C type as written, without the name and array suffix
	Offset   int
	Size     int
	Signed   bool
	ArrayLen int  // N of "char comm[N]"; 0 when not a fixed array
	DataLoc  bool // __data_loc: a u32 (len<<16 | offset from record start)
	RelLoc   bool // __rel_loc: like DataLoc, offset relative to the end of the field
}

// IsString tells whether the field holds characters (fixed array or dynamic).
func (f *Field) IsString() bool {
	t := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(f.Type, "__data_loc"), "__rel_loc"))
	t = strings.TrimSuffix(t, "[]")
	t = strings.TrimSpace(t)
	t = strings.TrimPrefix(t, "const ")
	t = strings.TrimPrefix(t, "unsigned ")
	t = strings.TrimPrefix(t, "signed ")
	return t == "char" || t == "u8" || t == "s8"
}

// IsInt tells whether the field can be read as a plain integer of 1, 2, 4 or 8 bytes.
func (f *Field) IsInt() bool {
	if f.DataLoc || f.RelLoc || f.ArrayLen != 0 || strings.Contains(f.Type, "[") {
		return false
	}
	switch f.Size {
	case 1, 2, 4, 8:
	default:
		return false
	}
	return !strings.HasPrefix(f.Type, "struct ") && !strings.HasPrefix(f.Type, "union ")
}

// EventFormat is a parsed events/<system>/<event>/format file.
type EventFormat struct {
	System   string
	Name     string
	ID       int
	Common   []Field // common_type, common_flags, common_preempt_count, common_pid...
	Fields   []Field // the event's own fields
	PrintFmt string  // the "print fmt:" line without the prefix
}

// Field returns the named field (own fields first, then common ones) or nil.
func (e *EventFormat) Field(name string) *Field {
	for i := range e.Fields {
		if e.Fields[i].Name == name {
			return &e.Fields[i]
		}
	}
	for i := range e.Common {
		if e.Common[i].Name == name {
			return &e.Common[i]
		}
	}
	return nil
}

// ParseEventFormat parses the text of an event format file. system may be empty.
func ParseEventFormat(system, text string) (*EventFormat, error) {
	ev := &EventFormat{System: system, ID: -1}
	inFields := false
	sawBlank := false
	for lineNo, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "name:"):
			ev.Name = strings.TrimSpace(strings.TrimPrefix(trimmed, "name:"))
		case strings.HasPrefix(trimmed, "ID:"):
			id, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(trimmed, "ID:")))
			if err != nil || id < 0 || id > 0xffff {
				return nil, fmt.Errorf("%w: line %d: bad ID %q", ErrFormat, lineNo+1, trimmed)
			}
			ev.ID = id
		case trimmed == "format:":
			inFields = true
		case strings.HasPrefix(trimmed, "print fmt:"):
			ev.PrintFmt = strings.TrimSpace(strings.TrimPrefix(trimmed, "print fmt:"))
			inFields = false
		case trimmed == "":
			if inFields && (len(ev.Common) > 0 || len(ev.Fields) > 0) {
				sawBlank = true
			}
		case inFields && strings.HasPrefix(trimmed, "field:"):
			f, err := parseFieldLine(trimmed)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: %v", ErrFormat, lineNo+1, err)
			}
			// The kernel separates the common fields from the event's own with a blank
			// line; older files have no blank line but name them common_*.
			if !sawBlank && strings.HasPrefix(f.Name, "common_") {
				ev.Common = append(ev.Common, f)
			} else {
				ev.Fields = append(ev.Fields, f)
			}
		}
	}
	if ev.Name == "" || ev.ID < 0 {
		return nil, fmt.Errorf("%w: no name or ID", ErrFormat)
	}
	return ev, nil
}

// parseFieldLine parses "field:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;".
func parseFieldLine(line string) (Field, error) {
	var f Field
	haveOff, haveSize := false, false
	for _, part := range strings.Split(line, ";") {
		part = strings.TrimSpace(part)
		key, val, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "field":
			if err := parseDecl(val, &f); err != nil {
				return f, err
			}
		case "offset":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return f, fmt.Errorf("bad offset %q", val)
			}
			f.Offset, haveOff = n, true
		case "size":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return f, fmt.Errorf("bad size %q", val)
			}
			f.Size, haveSize = n, true
		case "signed":
			f.Signed = val == "1"
		}
	}
	if f.Name == "" || !haveOff || !haveSize {
		return f, fmt.Errorf("incomplete field %q", line)
	}
	return f, nil
}

func parseDecl(decl string, f *Field) error {
	decl = strings.TrimSpace(decl)
	if strings.HasPrefix(decl, "__data_loc") {
		f.DataLoc = true
	} else if strings.HasPrefix(decl, "__rel_loc") {
		f.RelLoc = true
	}
	i := strings.LastIndexAny(decl, " \t*")
	if i < 0 || i == len(decl)-1 {
		return fmt.Errorf("bad declaration %q", decl)
	}
	name := decl[i+1:]
	f.Type = strings.TrimSpace(decl[:i+1])
	if b := strings.IndexByte(name, '['); b >= 0 {
		e := strings.IndexByte(name, ']')
		if e < b {
			return fmt.Errorf("bad array %q", name)
		}
		dim := name[b+1 : e]
		name = name[:b]
		if dim != "" {
			n, err := strconv.Atoi(dim)
			if err != nil {
				// A symbolic dimension (e.g. TASK_COMM_LEN): the size: says the truth.
				n = -1
			}
			f.ArrayLen = n
		}
		f.Type += "[]"
	}
	f.Name = name
	return nil
}

// PageHeader is the layout of struct buffer_data_page from events/header_page.
type PageHeader struct {
	TimestampOffset, TimestampSize int
	CommitOffset, CommitSize       int
	DataOffset                     int
	DataSize                       int // page size minus DataOffset, as the kernel says
}

// ParseHeaderPage parses events/header_page.
func ParseHeaderPage(text string) (PageHeader, error) {
	var ph PageHeader
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "field:") {
			continue
		}
		f, err := parseFieldLine(t)
		if err != nil {
			return ph, fmt.Errorf("%w: %v", ErrHeaderPage, err)
		}
		switch f.Name {
		case "timestamp":
			ph.TimestampOffset, ph.TimestampSize = f.Offset, f.Size
		case "commit":
			ph.CommitOffset, ph.CommitSize = f.Offset, f.Size
		case "data":
			ph.DataOffset, ph.DataSize = f.Offset, f.Size
		default:
			continue
		}
		seen[f.Name] = true
	}
	if !seen["timestamp"] || !seen["commit"] || !seen["data"] {
		return ph, fmt.Errorf("%w: needs timestamp, commit and data fields", ErrHeaderPage)
	}
	if ph.TimestampSize != 8 || (ph.CommitSize != 4 && ph.CommitSize != 8) || ph.DataOffset < ph.CommitOffset+ph.CommitSize {
		return ph, fmt.Errorf("%w: unexpected layout %+v", ErrHeaderPage, ph)
	}
	return ph, nil
}

// EventHeader is the compressed ring-buffer event header from events/header_event.
type EventHeader struct {
	TypeLenBits, TimeDeltaBits int
	Padding, TimeExtend        uint32
	TimeStamp                  uint32
	DataMaxTypeLen             uint32
}

// DefaultEventHeader is what every kernel since 2.6.30 writes; used when a capture
// (e.g. SchedViz) did not keep header_event.
var DefaultEventHeader = EventHeader{5, 27, 29, 30, 31, 28}

// ParseHeaderEvent parses events/header_event and checks it is the layout this decoder
// knows (5-bit type_len, 27-bit time_delta).
func ParseHeaderEvent(text string) (EventHeader, error) {
	h := DefaultEventHeader
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		num := func(s string) (uint32, bool) {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
			return uint32(n), err == nil
		}
		if strings.HasPrefix(t, "data max type_len") {
			_, v, ok := strings.Cut(t, "==")
			if n, ok2 := num(v); ok && ok2 {
				h.DataMaxTypeLen = n
			}
			continue
		}
		key, val, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch {
		case key == "type_len" || key == "time_delta":
			n, ok := num(strings.TrimSuffix(val, "bits"))
			if !ok {
				return h, fmt.Errorf("%w: %q", ErrHeaderEvent, t)
			}
			if key == "type_len" {
				h.TypeLenBits = int(n)
			} else {
				h.TimeDeltaBits = int(n)
			}
		case key == "padding" || key == "time_extend" || key == "time_stamp":
			_, v, ok := strings.Cut(val, "==")
			n, ok2 := num(v)
			if !ok || !ok2 {
				return h, fmt.Errorf("%w: %q", ErrHeaderEvent, t)
			}
			switch key {
			case "padding":
				h.Padding = n
			case "time_extend":
				h.TimeExtend = n
			default:
				h.TimeStamp = n
			}
		}
	}
	if h.TypeLenBits != 5 || h.TimeDeltaBits != 27 {
		return h, fmt.Errorf("%w: type_len %d bits, time_delta %d bits (want 5, 27)", ErrHeaderEvent, h.TypeLenBits, h.TimeDeltaBits)
	}
	return h, nil
}
