// Package rawimport is the `placemap-collect import` path for binary inputs: it
// recognises a raw tracefs capture directory (tracefs-raw), a trace-cmd trace.dat
// (tracedat) or a perf.data (perfdata), decodes it with internal/tracefs,
// internal/tracedat or internal/perfdata, writes the Arrow IPC event stream and returns
// the import summary.
package rawimport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"placemap/collectors/internal/perfdata"
	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracedat"
	"placemap/collectors/internal/tracefs"
)

// Formats this package reads (the ImportSummary format names).
const (
	FormatTracefsRaw = "tracefs-raw"
	FormatTracedat   = "tracedat"
	FormatPerfdata   = "perfdata"
)

// Detect names the binary format at path, or "" when it is neither (text is left to
// the text importer).
func Detect(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if st.IsDir() {
		if tracefs.IsCaptureDir(path) {
			return FormatTracefsRaw
		}
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, len(tracedat.Magic))
	if _, err := io.ReadFull(f, head); err == nil {
		switch {
		case tracedat.IsTraceDat(head):
			return FormatTracedat
		case perfdata.IsPerfData(head):
			return FormatPerfdata
		}
	}
	return ""
}

// Options of one binary import.
type Options struct {
	Path     string
	Format   string    // FormatTracefsRaw, FormatTracedat, FormatPerfdata, or "" to detect
	Out      string    // output path, or "-" for Stdout
	Stdout   io.Writer // where "-" writes
	Instance string    // trace.dat: only this buffer ("top" or an instance name)
}

// Run decodes opts.Path and writes the Arrow stream; no output file is left behind on
// error (the output is written to OUT.partial, or a temporary file for "-", and moved
// into place at the end).
//
// Rows come out in timestamp order: the decoder merges the CPUs by timestamp, and in
// the rare capture where a CPU's own clock went back, the events are decoded a second
// time, stably sorted in memory and written again.
func Run(opts Options) (*schema.ImportSummary, error) {
	format := opts.Format
	if format == "" {
		format = Detect(opts.Path)
	}
	if format == "" {
		return nil, fmt.Errorf("%s: neither a raw tracefs capture directory, a trace.dat nor a perf.data", opts.Path)
	}
	if opts.Instance != "" && format != FormatTracedat {
		return nil, errors.New("--instance applies to trace.dat files only")
	}
	decode := func(sink tracefs.Sink) (*tracefs.Result, error) {
		switch format {
		case FormatTracefsRaw:
			return tracefs.DecodeDir(opts.Path, sink)
		case FormatTracedat:
			return tracedat.DecodeWith(opts.Path, sink, tracedat.DecodeOptions{Instance: opts.Instance})
		case FormatPerfdata:
			return perfdata.Decode(opts.Path, sink)
		}
		return nil, fmt.Errorf("unknown binary format %q", format)
	}
	var f *os.File
	var err error
	if opts.Out == "-" {
		f, err = os.CreateTemp("", "placemap-import-*.arrow")
	} else {
		f, err = os.Create(opts.Out + ".partial")
	}
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		_ = f.Close()
		if !ok || opts.Out == "-" {
			_ = os.Remove(f.Name())
		}
	}()
	sink := tracefs.NewArrowSink(f)
	res, err := decode(sink)
	if err != nil {
		return nil, err
	}
	if err := sink.Close(); err != nil {
		return nil, err
	}
	if res.Stats.OutOfOrder > 0 {
		if err := rewriteSorted(f, decode); err != nil {
			return nil, err
		}
	}
	if opts.Out == "-" {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		if _, err := io.Copy(opts.Stdout, f); err != nil {
			return nil, err
		}
	} else {
		if err := f.Close(); err != nil {
			return nil, err
		}
		if err := os.Rename(f.Name(), opts.Out); err != nil {
			return nil, err
		}
	}
	ok = true
	sum := res.Summary([]string{opts.Path})
	if res.Stats.OutOfOrder > 0 {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("%d events were earlier than the event before them (a CPU's trace clock went back); the output is sorted by timestamp regardless", res.Stats.OutOfOrder))
	}
	return sum, nil
}

// rewriteSorted decodes again into memory, sorts stably by timestamp and rewrites f.
func rewriteSorted(f *os.File, decode func(tracefs.Sink) (*tracefs.Result, error)) error {
	var evs []tracefs.Event
	if _, err := decode(tracefs.SinkFunc(func(ev *tracefs.Event) error {
		evs = append(evs, *ev)
		return nil
	})); err != nil {
		return err
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].TsNs < evs[j].TsNs })
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	sink := tracefs.NewArrowSink(f)
	for i := range evs {
		if err := sink.Add(&evs[i]); err != nil {
			return err
		}
	}
	return sink.Close()
}
