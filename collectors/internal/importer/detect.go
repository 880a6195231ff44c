package importer

// detect.go owns recognising what a file is from its first bytes: binary formats the
// text importer cannot read (named, with the command that converts them), latency-format
// output (relative timestamps only), and which text format it is (ftrace, trace-cmd
// report, perf script), plus the facts its header states.

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"placemap/collectors/internal/schema"
)

// Format is an input text format.
type Format string

const (
	FormatAuto     Format = "auto"
	FormatFtrace   Format = "ftrace"
	FormatTracecmd Format = "tracecmd"
	FormatPerf     Format = "perf"
)

// ErrFormat is wrapped by every "cannot read this input" error.
var ErrFormat = errors.New("unsupported input")

// fileInfo is what detection learned about one file.
type fileInfo struct {
	format  Format
	nrCpus  int
	header  map[string]any
	lost    int64 // entries-written - entries-in-buffer
	clock   string
	warning []string
}

var (
	reEntries = regexp.MustCompile(`^#\s*entries-in-buffer/entries-written:\s*(\d+)/(\d+)\s+#P:(\d+)`)
	reTracer  = regexp.MustCompile(`^#\s*tracer:\s*(\S+)`)
	reClock   = regexp.MustCompile(`^#\s*trace_clock:\s*(\S+)`)
	reVersion = regexp.MustCompile(`^version = (\d+)\s*$`)
	reCpus    = regexp.MustCompile(`^cpus=(\d+)\s*$`)
	// latency-format data line: `bash-1234  0d..2.  12us : event:` (no [CPU] column,
	// relative time in us/ms)
	reLatency = regexp.MustCompile(`^\s*\S.*-\d+\s+\d+[a-zA-Z.][^\s]*\s+\d+(us|ms)?\s?[ +!#*@$]?:\s`)
	// options/raw: `PID CPU TS ...` numbers only; options/hex: hex digits only
	reRawOpt = regexp.MustCompile(`^\s*\d+ \d+ \d+ `)
	reHexOpt = regexp.MustCompile(`^[0-9a-fA-F]{16,}\s*$`)
)

// binaryKind names binary inputs by magic; "" for text.
func binaryKind(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x17\x08\x44tracing")):
		return "a trace-cmd trace.dat file (convert it with `trace-cmd report -i FILE > FILE.txt`)"
	case bytes.HasPrefix(b, []byte("PERFILE2")) || bytes.HasPrefix(b, []byte("PERFFILE")):
		return "a perf.data file (import it with --format auto or perfdata, or convert it with `perf script -i FILE > FILE.txt`)"
	case len(b) > 262 && string(b[257:262]) == "ustar":
		return "a tar archive (unpack it and import the text trace inside)"
	case bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "a zstd-compressed file (decompress it first; gzip is read directly)"
	}
	n := len(b)
	if n > 4096 {
		n = 4096
	}
	bad := 0
	for _, c := range b[:n] {
		if c == 0 {
			return "binary data (e.g. per_cpu/cpuN/trace_pipe_raw ring-buffer pages or options/bin output; capture `trace` or `trace_pipe` text instead)"
		}
		if c < 0x09 || (c > 0x0d && c < 0x20) {
			bad++
		}
	}
	if bad*100 > n {
		return "binary data (e.g. per_cpu/cpuN/trace_pipe_raw ring-buffer pages; capture `trace` or `trace_pipe` text instead)"
	}
	return ""
}

// tracecmdBody reports whether a sched body is in trace-cmd's plugin form.
func tracecmdBody(name, body []byte, e *event) bool {
	k, known := kindOf(name)
	if !known {
		return false
	}
	switch k {
	case schema.KindSwitch:
		if ok, _ := switchKernel(body, e); !ok {
			ok, _ = switchTracecmd(body, e)
			return ok
		}
	case schema.KindWakeupNew, schema.KindWaking, schema.KindWakeup:
		if ok, _ := wakeKernel(body, e); !ok {
			ok, _ = wakeTracecmd(body, e)
			return ok
		}
	}
	return false
}

// detect examines the first bytes of a (decompressed) file.
func detect(name string, b []byte, want Format) (*fileInfo, error) {
	if k := binaryKind(b); k != "" {
		return nil, fmt.Errorf("%w: %s: binary format not supported by text import: %s", ErrFormat, name, k)
	}
	info := &fileInfo{header: map[string]any{}}
	var ftraceHdr, tracecmdHdr, latency bool
	var ftraceLines, perfLines, tcBodies, latLines, rawOpt, hexOpt, tried int
	var firstLine string
	var p prefix
	var e event
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > 1 {
		lines = lines[:len(lines)-1] // the last one may be cut by the sniff window
	}
	for _, l := range lines {
		l = bytes.TrimRight(l, "\r")
		t := bytes.TrimSpace(l)
		if len(t) == 0 {
			continue
		}
		if t[0] == '#' {
			if m := reEntries.FindSubmatch(t); m != nil {
				ftraceHdr = true
				inBuf, _ := strconv.ParseInt(string(m[1]), 10, 64)
				written, _ := strconv.ParseInt(string(m[2]), 10, 64)
				cpus, _ := strconv.Atoi(string(m[3]))
				info.header["entries_in_buffer"] = inBuf
				info.header["entries_written"] = written
				info.nrCpus = cpus
				if written > inBuf {
					info.lost = written - inBuf
				}
			} else if m := reTracer.FindSubmatch(t); m != nil {
				ftraceHdr = true
				info.header["tracer"] = string(m[1])
			} else if m := reClock.FindSubmatch(t); m != nil {
				info.clock = string(m[1])
			} else if bytes.Contains(t, []byte("latency trace v")) || bytes.Contains(t, []byte("=> CPU#")) {
				latency = true
			}
			continue
		}
		if m := reVersion.FindSubmatch(l); m != nil {
			tracecmdHdr = true
			v, _ := strconv.Atoi(string(m[1]))
			info.header["version"] = v
			continue
		}
		if m := reCpus.FindSubmatch(l); m != nil {
			tracecmdHdr = true
			info.nrCpus, _ = strconv.Atoi(string(m[1]))
			continue
		}
		if isHeaderLine(l) {
			tracecmdHdr = true
			continue
		}
		if tried >= 400 {
			continue
		}
		tried++
		if firstLine == "" {
			firstLine = string(l)
			if len(firstLine) > 120 {
				firstLine = firstLine[:120] + "..."
			}
		}
		if _, _, ok := lostLine(t); ok {
			continue
		}
		ok := ftracePrefix(l, &p)
		if !ok && l[0] != ' ' && l[0] != '\t' {
			if k := bytes.IndexByte(l, ' '); k > 1 && l[k-1] == ':' && ftracePrefix(l[k:], &p) {
				ok = true
				tcBodies++ // only trace-cmd prefixes instance lines
			}
		}
		if ok {
			ftraceLines++
			if tracecmdBody(p.name, p.body, &e) {
				tcBodies++
			}
			continue
		}
		if perfPrefix(l, &p) {
			perfLines++
			continue
		}
		if reLatency.Match(l) {
			latLines++
		}
		if reRawOpt.Match(l) {
			rawOpt++
		}
		if reHexOpt.Match(l) {
			hexOpt++
		}
	}
	if latency || (latLines > 0 && ftraceLines == 0 && perfLines == 0) {
		return nil, fmt.Errorf("%w: %s: latency-format output (options/latency-format) has only relative timestamps and no [CPU] column; re-capture with `echo 0 > /sys/kernel/tracing/options/latency-format` (or `trace-cmd report` without -l)", ErrFormat, name)
	}
	if ftraceLines == 0 && perfLines == 0 && rawOpt > tried/2 {
		return nil, fmt.Errorf("%w: %s: options/raw output (`PID CPU TS fields` without event names) cannot be read exactly; re-capture with `echo 0 > /sys/kernel/tracing/options/raw`", ErrFormat, name)
	}
	if ftraceLines == 0 && perfLines == 0 && hexOpt > tried/2 {
		return nil, fmt.Errorf("%w: %s: options/hex output cannot be read as text; re-capture with `echo 0 > /sys/kernel/tracing/options/hex`", ErrFormat, name)
	}
	var got Format
	switch {
	case tracecmdHdr:
		got = FormatTracecmd
	case ftraceHdr:
		got = FormatFtrace
	case perfLines > ftraceLines:
		got = FormatPerf
	case ftraceLines > 0 && tcBodies > 0:
		got = FormatTracecmd
	case ftraceLines > 0:
		got = FormatFtrace
	}
	if want != FormatAuto && want != "" {
		if got != "" && got != want && !(got == FormatTracecmd && want == FormatFtrace) && !(got == FormatFtrace && want == FormatTracecmd) {
			return nil, fmt.Errorf("%w: %s: --format %s given but the file looks like %s", ErrFormat, name, want, got)
		}
		got = want
	}
	if got == "" {
		if tried == 0 {
			// only comments/headers (or empty): nothing to parse, not an error
			got = FormatFtrace
			if tracecmdHdr {
				got = FormatTracecmd
			}
		} else {
			return nil, fmt.Errorf("%w: %s: unknown text format: tried ftrace (`TASK-PID [CPU] [FLAGS] SECS.USECS: event: ...`), trace-cmd report (`version = 6` / `cpus=N` header, same line form) and perf script (`COMM PID [CPU] SECS.USECS: sched:event: ...`) on the first %d lines; none matched (first line: %q); use --format to force one", ErrFormat, name, tried, firstLine)
		}
	}
	info.format = got
	if info.nrCpus > 0 {
		info.header["nr_cpus"] = info.nrCpus
	}
	return info, nil
}
