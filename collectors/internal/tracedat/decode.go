package tracedat

import (
	"bytes"
	"fmt"
	"strings"

	"placemap/collectors/internal/mapfile"
	"placemap/collectors/internal/tracefs"
)

// DecodeOptions selects what to decode.
type DecodeOptions struct {
	// Instance names one buffer ("top" for the top-level buffer); empty decodes every
	// buffer the file holds, merged into one timeline.
	Instance string
}

// Decode reads the trace.dat at path and hands its events to sink in timestamp order.
func Decode(path string, sink tracefs.Sink) (*tracefs.Result, error) {
	return DecodeWith(path, sink, DecodeOptions{})
}

// DecodeWith is Decode with options. The file is mapped, not read onto the heap
// (internal/mapfile), and released on return.
func DecodeWith(path string, sink tracefs.Sink, opt DecodeOptions) (*tracefs.Result, error) {
	return mapfile.With(path, func(b []byte) (*tracefs.Result, error) {
		f, err := Parse(b)
		if err != nil {
			return nil, err
		}
		return f.Decode(sink, opt)
	})
}

// BufferNames lists the buffers of the file ("top" first).
func (f *File) BufferNames() []string {
	var n []string
	for _, b := range f.Buffers {
		n = append(n, b.Name)
	}
	return n
}

// Decode decodes the selected buffers of a parsed file.
func (f *File) Decode(sink tracefs.Sink, opt DecodeOptions) (*tracefs.Result, error) {
	res := &tracefs.Result{Format: "tracedat", NrCPUs: f.NrCPUs, TraceClock: f.Clock, Header: map[string]any{
		"version":     f.Version,
		"compression": f.Compression,
		"page_size":   f.PageSize,
	}}
	if f.Uname != "" {
		res.Header["uname"] = f.Uname
		if fs := strings.Fields(f.Uname); len(fs) >= 3 {
			res.KernelRelease = fs[2]
		}
	}
	if f.TraceCmd != "" {
		res.Header["trace_cmd_version"] = f.TraceCmd
	}
	var parts []tracefs.Part
	var decs []*tracefs.Decoder
	for _, b := range f.Buffers {
		if opt.Instance != "" && b.Name != opt.Instance {
			continue
		}
		ps := f.PageSize
		if b.PageSize > 0 {
			ps = b.PageSize
		}
		d, err := tracefs.NewDecoder(f.PageHeader, f.EventHeader, f.Formats, tracefs.Options{BigEndian: f.BigEndian, PageSize: ps})
		if err != nil {
			return nil, err
		}
		var srcs []tracefs.Source
		for _, c := range b.CPUs {
			srcs = append(srcs, tracefs.Source{CPU: int32(c.CPU), R: bytes.NewReader(c.Data), Size: int64(len(c.Data)), Name: fmt.Sprintf("%s cpu%d", b.Name, c.CPU)})
		}
		parts = append(parts, tracefs.Part{D: d, Sources: srcs})
		decs = append(decs, d)
		res.Buffers = append(res.Buffers, b.Name)
	}
	if opt.Instance != "" && len(parts) == 0 {
		return nil, fmt.Errorf("%w: %q (the file has %s)", ErrNoInstance, opt.Instance, strings.Join(f.BufferNames(), ", "))
	}
	s := tracefs.Track(sink, res)
	if f.TSOffset != 0 {
		off, inner := f.TSOffset, s
		s = tracefs.SinkFunc(func(ev *tracefs.Event) error {
			ev.TsNs += off
			return inner.Add(ev)
		})
	}
	if err := tracefs.RunMerged(parts, s); err != nil {
		return nil, err
	}
	res.Finish(decs...)
	res.Stats.Warnings = append(append([]string(nil), f.Warnings...), res.Stats.Warnings...)
	return res, nil
}
