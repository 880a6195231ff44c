// Package rawimport is the `placemap-collect import` path for binary inputs: it
// recognises a raw tracefs capture directory (tracefs-raw) or a trace-cmd trace.dat
// (tracedat), decodes it with internal/tracefs or internal/tracedat, writes the Arrow
// IPC event stream and returns the import summary.
package rawimport

import (
	"errors"
	"fmt"
	"io"
	"os"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracedat"
	"placemap/collectors/internal/tracefs"
)

// Formats this package reads (the ImportSummary format names).
const (
	FormatTracefsRaw = "tracefs-raw"
	FormatTracedat   = "tracedat"
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
	if _, err := io.ReadFull(f, head); err == nil && tracedat.IsTraceDat(head) {
		return FormatTracedat
	}
	return ""
}

// Options of one binary import.
type Options struct {
	Path     string
	Format   string    // FormatTracefsRaw, FormatTracedat, or "" to detect
	Out      string    // output path, or "-" for Stdout
	Stdout   io.Writer // where "-" writes
	Instance string    // trace.dat: only this buffer ("top" or an instance name)
}

// Run decodes opts.Path and writes the Arrow stream; no output file is left behind on
// error (the output is written to OUT.partial and renamed at the end).
func Run(opts Options) (*schema.ImportSummary, error) {
	format := opts.Format
	if format == "" {
		format = Detect(opts.Path)
	}
	if format == "" {
		return nil, fmt.Errorf("%s: neither a raw tracefs capture directory nor a trace.dat", opts.Path)
	}
	if opts.Instance != "" && format != FormatTracedat {
		return nil, errors.New("--instance applies to trace.dat files only")
	}
	var w io.Writer
	var f *os.File
	if opts.Out == "-" {
		w = opts.Stdout
	} else {
		var err error
		if f, err = os.Create(opts.Out + ".partial"); err != nil {
			return nil, err
		}
		w = f
	}
	ok := false
	defer func() {
		if f != nil && !ok {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	sink := tracefs.NewArrowSink(w)
	var res *tracefs.Result
	var err error
	switch format {
	case FormatTracefsRaw:
		res, err = tracefs.DecodeDir(opts.Path, sink)
	case FormatTracedat:
		res, err = tracedat.DecodeWith(opts.Path, sink, tracedat.DecodeOptions{Instance: opts.Instance})
	default:
		return nil, fmt.Errorf("unknown binary format %q", format)
	}
	if err != nil {
		return nil, err
	}
	if err := sink.Close(); err != nil {
		return nil, err
	}
	if f != nil {
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
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("%d events were earlier than the event before them on the same CPU (trace clock going back); rows are in merge order, not re-sorted", res.Stats.OutOfOrder))
	}
	return sum, nil
}
