package tracefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"placemap/collectors/internal/schema"
)

// ErrNotCapture says a directory is not a raw tracefs capture.
var ErrNotCapture = errors.New("tracefs: not a raw capture directory (need per_cpu/cpuN.raw + events/ or traces/cpuN + formats/)")

// Result describes a finished decode, for the import summary.
type Result struct {
	Format        string   // "tracefs-raw" or "tracedat"
	Buffers       []string // buffers decoded: "top" for the top-level buffer, else the instance name
	Files         []string // per-CPU inputs
	NrCPUs        int      // CPUs the capture has data files (or the trace.dat header) for
	TraceClock    string
	KernelRelease string
	Header        map[string]any
	Stats         Stats // summed over buffers
	CommEscaped   int
	TStart, TEnd  int64
	HaveTimes     bool
	CPUsSeen      map[int32]bool // CPUs that recorded an event or were named by one
}

// tracker wraps a sink to note the time range.
type tracker struct {
	next Sink
	r    *Result
}

func (t *tracker) Add(ev *Event) error {
	if t.r.CPUsSeen == nil {
		t.r.CPUsSeen = map[int32]bool{}
	}
	t.r.CPUsSeen[ev.CPU] = true
	switch {
	case ev.HasTarget:
		t.r.CPUsSeen[ev.TargetCPU] = true
	case ev.Kind == schema.KindMigrate:
		t.r.CPUsSeen[ev.OrigCPU] = true
		t.r.CPUsSeen[ev.DestCPU] = true
	}
	if !t.r.HaveTimes {
		t.r.TStart, t.r.TEnd, t.r.HaveTimes = ev.TsNs, ev.TsNs, true
	} else {
		t.r.TStart = min(t.r.TStart, ev.TsNs)
		t.r.TEnd = max(t.r.TEnd, ev.TsNs)
	}
	return t.next.Add(ev)
}

// Track wraps sink so r's time range follows the events given to it.
func Track(sink Sink, r *Result) Sink { return &tracker{next: sink, r: r} }

// Finish folds the decoders' statistics into r.
func (r *Result) Finish(ds ...*Decoder) {
	r.Stats = newStats()
	for _, d := range ds {
		s := &d.Stats
		for k, v := range s.EventsByKind {
			r.Stats.EventsByKind[k] += v
		}
		for k, v := range s.Skipped {
			r.Stats.Skipped[k] += v
		}
		for k, v := range s.Records {
			r.Stats.Records[k] += v
		}
		r.Stats.Pages += s.Pages
		r.Stats.LostEvents += s.LostEvents
		r.Stats.LostUnknown += s.LostUnknown
		r.Stats.OutOfOrder += s.OutOfOrder
		r.Stats.Warnings = append(r.Stats.Warnings, s.Warnings...)
		r.CommEscaped += d.Intern.Escaped
	}
}

// IsCaptureDir tells whether dir looks like a raw capture (for format detection).
func IsCaptureDir(dir string) bool {
	_, _, err := captureLayout(dir)
	return err == nil
}

var cpuFileRE = regexp.MustCompile(`^cpu(\d+)(\.raw)?$`)

// captureLayout finds the per-CPU page files and the format directory.
func captureLayout(dir string) (map[int32]string, string, error) {
	type layout struct{ data, formats string }
	for _, l := range []layout{{"per_cpu", "events"}, {"traces", "formats"}} {
		dd := filepath.Join(dir, l.data)
		ents, err := os.ReadDir(dd)
		if err != nil {
			continue
		}
		files := map[int32]string{}
		for _, e := range ents {
			m := cpuFileRE.FindStringSubmatch(e.Name())
			if m == nil {
				continue
			}
			n, err := strconv.Atoi(m[1])
			if err != nil || n > 1<<20 {
				continue
			}
			p := filepath.Join(dd, e.Name())
			if e.IsDir() {
				// per_cpu/cpuN/trace_pipe_raw, as copied straight from tracefs.
				p = filepath.Join(p, "trace_pipe_raw")
				if _, err := os.Stat(p); err != nil {
					continue
				}
			}
			files[int32(n)] = p
		}
		if len(files) == 0 {
			continue
		}
		fd := filepath.Join(dir, l.formats)
		if _, err := os.Stat(filepath.Join(fd, "header_page")); err != nil {
			return nil, "", fmt.Errorf("%w: %s has no header_page", ErrNotCapture, fd)
		}
		return files, fd, nil
	}
	return nil, "", ErrNotCapture
}

// LoadFormats reads header_page, header_event (optional) and every <system>/<event>/format
// under dir. Unparseable event formats are skipped with a warning (their records then
// count as unknown_event), never fatal.
func LoadFormats(dir string) (PageHeader, EventHeader, []*EventFormat, []string, error) {
	var warns []string
	hpText, err := os.ReadFile(filepath.Join(dir, "header_page"))
	if err != nil {
		return PageHeader{}, EventHeader{}, nil, nil, err
	}
	ph, err := ParseHeaderPage(string(hpText))
	if err != nil {
		return ph, EventHeader{}, nil, nil, err
	}
	eh := DefaultEventHeader
	if heText, err := os.ReadFile(filepath.Join(dir, "header_event")); err == nil {
		if eh, err = ParseHeaderEvent(string(heText)); err != nil {
			return ph, eh, nil, nil, err
		}
	} else {
		warns = append(warns, "no header_event: assuming the standard 5/27-bit event header")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "*", "format"))
	sort.Strings(paths)
	var fmts []*EventFormat
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return ph, eh, nil, nil, err
		}
		system := filepath.Base(filepath.Dir(filepath.Dir(p)))
		f, err := ParseEventFormat(system, string(b))
		if err != nil {
			warns = append(warns, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		fmts = append(fmts, f)
	}
	return ph, eh, fmts, warns, nil
}

// DecodeDir decodes a raw capture directory — per_cpu/cpuN.raw (bytes read from
// per_cpu/cpuN/trace_pipe_raw) with events/{header_page,header_event,<sys>/<ev>/format},
// or SchedViz's traces/cpuN with formats/ — and hands the events to sink in timestamp
// order.
func DecodeDir(dir string, sink Sink) (*Result, error) {
	files, fdir, err := captureLayout(dir)
	if err != nil {
		return nil, err
	}
	ph, eh, fmts, warns, err := LoadFormats(fdir)
	if err != nil {
		return nil, err
	}
	opt := Options{}
	if b, err := os.ReadFile(filepath.Join(dir, "page-size")); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > ph.DataOffset && n <= 1<<26 {
			opt.PageSize = n
		}
	}
	d, err := NewDecoder(ph, eh, fmts, opt)
	if err != nil {
		return nil, err
	}
	d.Stats.Warnings = append(warns, d.Stats.Warnings...)
	res := &Result{Format: "tracefs-raw", Header: map[string]any{}}
	if b, err := os.ReadFile(filepath.Join(dir, "kernel-release")); err == nil {
		res.KernelRelease = strings.TrimSpace(string(b))
		res.Header["kernel_release"] = res.KernelRelease
	}
	// stats.txt: the per_cpu/cpuN/stats files of the captured buffer, CPU by CPU.
	var stats []CPUStats
	if b, err := os.ReadFile(filepath.Join(dir, "stats.txt")); err == nil {
		stats = ParseStats(string(b))
		var overrun, dropped int64
		for _, s := range stats {
			overrun += s.Overrun
			dropped += s.Dropped
		}
		res.Header["kernel_overrun"] = overrun
		res.Header["kernel_dropped"] = dropped
	}
	if b, err := os.ReadFile(filepath.Join(dir, "trace_clock")); err == nil {
		res.TraceClock = currentClock(string(b))
	}
	cpus := make([]int32, 0, len(files))
	for c := range files {
		cpus = append(cpus, c)
	}
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	var srcs []Source
	var opened []*os.File
	defer func() {
		for _, f := range opened {
			_ = f.Close()
		}
	}()
	for _, c := range cpus {
		f, err := os.Open(files[c])
		if err != nil {
			return nil, err
		}
		opened = append(opened, f)
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, files[c])
		srcs = append(srcs, Source{CPU: c, R: f, Size: st.Size(), Name: rel})
		res.Files = append(res.Files, files[c])
	}
	if len(cpus) > 0 {
		res.NrCPUs = int(cpus[len(cpus)-1]) + 1
	}
	if err := d.Run(srcs, Track(sink, res)); err != nil {
		return nil, err
	}
	res.Finish(d)
	var lost int64
	for _, s := range stats {
		lost += s.Overrun + s.Dropped
	}
	if lost > res.Stats.LostEvents && res.Stats.LostUnknown == 0 {
		res.Stats.warnf("the kernel's stats count %d events overrun or dropped, the pages flag %d lost: the capture started after the buffer had wrapped", lost, res.Stats.LostEvents)
	}
	return res, nil
}

// currentClock picks the bracketed entry of a trace_clock file ("[local] global ...").
func currentClock(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}
