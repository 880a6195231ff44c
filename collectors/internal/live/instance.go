// Package live is the live tracefs collector: its own tracefs instance, per-CPU
// trace_pipe_raw readers decoded with internal/tracefs, a streaming timestamp merge,
// per-LLC utilization and lost-event records, and the websocket uplink that loses nothing.
//
// instance.go owns the tracefs side: mounting tracefs when absent, creating and removing
// the collector's own instance (instances/placemap-<pid>), enabling its events, and the
// format files the decoder needs. It never writes to the top-level buffer or to another
// tool's instance.
package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"placemap/collectors/internal/tracefs"
)

// DefaultEvents are the tracepoints placemap models.
var DefaultEvents = []string{
	"sched_wakeup_new", "sched_waking", "sched_wakeup", "sched_migrate_task",
	"sched_switch", "sched_process_fork", "sched_process_exit", "sched_process_exec",
}

// ErrNoTracefs says tracefs is neither mounted nor mountable here.
var ErrNoTracefs = errors.New("live: tracefs is not available (need root, and a kernel with CONFIG_TRACING)")

// InstancePrefix names the instances this tool creates: placemap-<pid>.
const InstancePrefix = "placemap-"

// Instance is the collector's own tracefs instance.
type Instance struct {
	Root    string   // the tracefs mount, e.g. /sys/kernel/tracing
	Name    string   // instances/<Name>
	Dir     string   // Root/instances/Name
	Events  []string // tracepoints enabled (sched system)
	CPUs    []int    // per_cpu/cpuN present
	enabled []string // enable files written with 1, disabled again on Close
	closed  bool
}

// FindTracefs returns the tracefs mount, mounting it at /sys/kernel/tracing when absent.
func FindTracefs() (string, error) {
	for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		if _, err := os.Stat(filepath.Join(d, "instances")); err == nil {
			return d, nil
		}
	}
	const d = "/sys/kernel/tracing"
	if err := syscall.Mount("nodev", d, "tracefs", 0, ""); err != nil {
		return "", fmt.Errorf("%w: mount -t tracefs nodev %s: %v", ErrNoTracefs, d, err)
	}
	if _, err := os.Stat(filepath.Join(d, "instances")); err != nil {
		return "", fmt.Errorf("%w: %s mounted but has no instances/", ErrNoTracefs, d)
	}
	return d, nil
}

// Config of an instance.
type Config struct {
	Events   []string // sched tracepoint names ("sched_switch" or "sched:sched_switch")
	BufferKB int      // per-CPU buffer_size_kb; 0 keeps the kernel's default
}

// Setup creates instances/placemap-<pid> under root with its events enabled and
// tracing on. On any error it removes what it created.
func Setup(root string, cfg Config) (_ *Instance, err error) {
	name := InstancePrefix + strconv.Itoa(os.Getpid())
	in := &Instance{Root: root, Name: name, Dir: filepath.Join(root, "instances", name)}
	if err := os.Mkdir(in.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("live: creating tracefs instance %s: %w", in.Dir, err)
	}
	defer func() {
		if err != nil {
			_ = in.Close()
		}
	}()
	if err := in.write("tracing_on", "0"); err != nil {
		return nil, err
	}
	if cfg.BufferKB > 0 {
		if err := in.write("buffer_size_kb", strconv.Itoa(cfg.BufferKB)); err != nil {
			return nil, err
		}
	}
	// mono: timestamps comparable with CLOCK_MONOTONIC, so an idle CPU's reader can
	// vouch for "nothing before now" and latency can be measured end to end.
	if err := in.write("trace_clock", "mono"); err != nil {
		return nil, err
	}
	// Drop new events when full (counted as "dropped events") rather than overwrite
	// unread pages: a streaming reader wants what it has not read yet.
	if err := in.write("options/overwrite", "0"); err != nil {
		return nil, err
	}
	evs := cfg.Events
	if len(evs) == 0 {
		evs = DefaultEvents
	}
	for _, e := range evs {
		e = strings.TrimPrefix(e, "sched:")
		rel := filepath.Join("events", "sched", e, "enable")
		if _, err := os.Stat(filepath.Join(in.Dir, rel)); err != nil {
			return nil, fmt.Errorf("live: no tracepoint sched:%s on this kernel (see %s/available_events)", e, root)
		}
		if err := in.write(rel, "1"); err != nil {
			return nil, err
		}
		in.enabled = append(in.enabled, rel)
		in.Events = append(in.Events, e)
	}
	ents, err := os.ReadDir(filepath.Join(in.Dir, "per_cpu"))
	if err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	for _, e := range ents {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "cpu")); err == nil && strings.HasPrefix(e.Name(), "cpu") {
			in.CPUs = append(in.CPUs, n)
		}
	}
	sortInts(in.CPUs)
	if err := in.write("tracing_on", "1"); err != nil {
		return nil, err
	}
	return in, nil
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func (in *Instance) write(rel, v string) error {
	if err := os.WriteFile(filepath.Join(in.Dir, rel), []byte(v), 0); err != nil {
		return fmt.Errorf("live: writing %q to %s: %w", v, filepath.Join(in.Dir, rel), err)
	}
	return nil
}

// Stop turns recording off in the instance (readers can still drain what is buffered).
func (in *Instance) Stop() error { return in.write("tracing_on", "0") }

// Decoder builds a tracefs decoder from the instance's own format files.
func (in *Instance) Decoder() (*tracefs.Decoder, error) {
	ev := filepath.Join(in.Dir, "events")
	hp, err := os.ReadFile(filepath.Join(ev, "header_page"))
	if err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	ph, err := tracefs.ParseHeaderPage(string(hp))
	if err != nil {
		return nil, err
	}
	eh := tracefs.DefaultEventHeader
	if he, err := os.ReadFile(filepath.Join(ev, "header_event")); err == nil {
		if eh, err = tracefs.ParseHeaderEvent(string(he)); err != nil {
			return nil, err
		}
	}
	var fmts []*tracefs.EventFormat
	for _, e := range in.Events {
		b, err := os.ReadFile(filepath.Join(ev, "sched", e, "format"))
		if err != nil {
			return nil, fmt.Errorf("live: %w", err)
		}
		f, err := tracefs.ParseEventFormat("sched", string(b))
		if err != nil {
			return nil, fmt.Errorf("live: sched/%s/format: %w", e, err)
		}
		fmts = append(fmts, f)
	}
	opt := tracefs.Options{}
	if b, err := os.ReadFile(filepath.Join(in.Dir, "buffer_subbuf_size_kb")); err == nil {
		if kb, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && kb > 0 {
			opt.PageSize = kb * 1024
		}
	}
	if opt.PageSize == 0 {
		opt.PageSize = os.Getpagesize()
	}
	return tracefs.NewDecoder(ph, eh, fmts, opt)
}

// Stats reads per_cpu/cpuN/stats of every CPU, in in.CPUs order.
func (in *Instance) Stats() ([]tracefs.CPUStats, error) {
	out := make([]tracefs.CPUStats, len(in.CPUs))
	for i, c := range in.CPUs {
		b, err := os.ReadFile(filepath.Join(in.Dir, "per_cpu", "cpu"+strconv.Itoa(c), "stats"))
		if err != nil {
			return nil, fmt.Errorf("live: %w", err)
		}
		if s := tracefs.ParseStats(string(b)); len(s) == 1 {
			out[i] = s[0]
		}
	}
	return out, nil
}

// PipePath is a CPU's trace_pipe_raw.
func (in *Instance) PipePath(cpu int) string {
	return filepath.Join(in.Dir, "per_cpu", "cpu"+strconv.Itoa(cpu), "trace_pipe_raw")
}

// Close disables the instance's events, stops it and removes it. Every open file of the
// instance must be closed first (the kernel refuses to remove a busy instance; Close
// retries for a few seconds). Safe to call twice.
func (in *Instance) Close() error {
	if in.closed {
		return nil
	}
	var errs []error
	_ = in.write("tracing_on", "0")
	for _, rel := range in.enabled {
		if err := in.write(rel, "0"); err != nil {
			errs = append(errs, err)
		}
	}
	in.enabled = nil
	var err error
	for i := 0; i < 50; i++ {
		if err = syscall.Rmdir(in.Dir); err == nil || errors.Is(err, syscall.ENOENT) {
			err = nil
			break
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("live: removing tracefs instance %s: %w", in.Dir, err))
	} else {
		in.closed = true
	}
	return errors.Join(errs...)
}

// RemoveStale removes instances named placemap-<pid> whose process no longer exists
// (left by a collector that was killed with SIGKILL). It returns the names removed.
func RemoveStale(root string) []string {
	ents, _ := os.ReadDir(filepath.Join(root, "instances"))
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), InstancePrefix))
		if !strings.HasPrefix(e.Name(), InstancePrefix) || err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
			continue
		}
		in := &Instance{Root: root, Name: e.Name(), Dir: filepath.Join(root, "instances", e.Name())}
		if in.Close() == nil {
			out = append(out, e.Name())
		}
	}
	return out
}
