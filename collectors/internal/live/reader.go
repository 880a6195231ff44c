package live

// reader.go owns one CPU's trace_pipe_raw: non-blocking page-size reads, decoded with
// that CPU's own Decoder (decoders keep per-run state and are not shared), handed to
// the merge with a watermark. When the buffer is empty the reader vouches for
// "nothing earlier than the moment I looked, less a small slack", so an idle CPU never
// holds the merge back for longer than one idle poll.
//
// The pages read in one pass (until the buffer is empty) go to the merge as one chunk
// with that watermark, not one chunk per page: each hand-over wakes the merge goroutine
// (and often an idle thread, a futex wake and a context switch), which cost more than
// decoding the page under hackbench.

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/tracefs"
)

// IdleSlack covers events reserved (time-stamped) just before a read found the buffer
// empty and committed just after.
const IdleSlack = 5 * time.Millisecond

// IdlePoll is how long a reader sleeps after finding its buffer empty.
const IdlePoll = 10 * time.Millisecond

// MonoNow is CLOCK_MONOTONIC in ns, the instance's trace clock (trace_clock=mono).
func MonoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// cpuChunk is what a reader sends to the merge.
type cpuChunk struct {
	src  int
	evs  []tracefs.Event
	wm   int64
	err  error // a fatal read error; the reader has stopped
	done bool  // the reader drained its buffer after drain was closed and stopped
}

// cpuReader reads one CPU.
type cpuReader struct {
	src      int
	cpu      int32
	path     string
	d        *tracefs.Decoder
	out      chan<- cpuChunk
	free     chan []tracefs.Event
	drain    <-chan struct{}
	pageLost int64 // lost counts flagged on pages (overwrite mode only; stats are the truth)
}

func (r *cpuReader) recycle(evs []tracefs.Event) {
	if cap(evs) == 0 {
		return
	}
	select {
	case r.free <- evs[:0]:
	default:
	}
}

func (r *cpuReader) buf() []tracefs.Event {
	select {
	case b := <-r.free:
		return b
	default:
		return make([]tracefs.Event, 0, 1024)
	}
}

// MaxChunk caps the events a reader gathers before handing them over while its buffer
// still has pages (bounds the chunk's memory and the merge's wait on a busy CPU).
const MaxChunk = 8192

// run reads until drain is closed and the buffer is empty, or a fatal error.
func (r *cpuReader) run() {
	fd, err := syscall.Open(r.path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		r.out <- cpuChunk{src: r.src, err: fmt.Errorf("live: open %s: %w", r.path, err), done: true}
		return
	}
	defer func() {
		_ = syscall.Close(fd)
		if p := recover(); p != nil {
			r.out <- cpuChunk{src: r.src, err: fmt.Errorf("live: cpu%d reader: %v", r.cpu, p), done: true}
		}
	}()
	page := make([]byte, r.d.PageSize())
	draining := false
	var evs []tracefs.Event // gathered in this pass
	idle := time.NewTimer(IdlePoll)
	defer idle.Stop()
	for {
		t0 := MonoNow()
		n, err := syscall.Read(fd, page)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN) || (err == nil && n == 0):
			if draining {
				if len(evs) > 0 {
					r.out <- cpuChunk{src: r.src, evs: evs}
				}
				r.out <- cpuChunk{src: r.src, wm: Done, done: true}
				return
			}
			r.out <- cpuChunk{src: r.src, evs: evs, wm: t0 - int64(IdleSlack)}
			evs = nil
			idle.Reset(IdlePoll)
			select {
			case <-r.drain:
				// One more pass: tracing is off, read what is left, then stop.
				draining = true
			case <-idle.C:
			}
			continue
		case err != nil:
			if len(evs) > 0 {
				r.out <- cpuChunk{src: r.src, evs: evs}
			}
			r.out <- cpuChunk{src: r.src, err: fmt.Errorf("live: read %s: %w", r.path, err), done: true}
			return
		}
		if evs == nil {
			evs = r.buf()
		}
		start := len(evs)
		var derr error
		evs, derr = r.d.DecodePage(page[:n], r.cpu, evs)
		if derr != nil {
			r.d.Stats.Skipped[tracefs.SkipBadPage]++
		}
		// Page-flagged losses are reported through the kernel's stats instead.
		k := start
		for i := start; i < len(evs); i++ {
			if evs[i].Kind == schema.KindLost {
				if evs[i].LostEvents > 0 {
					r.pageLost += evs[i].LostEvents
				}
				continue
			}
			evs[k] = evs[i]
			k++
		}
		evs = evs[:k]
		if len(evs) >= MaxChunk {
			r.out <- cpuChunk{src: r.src, evs: evs}
			evs = nil
		}
	}
}
