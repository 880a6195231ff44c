package live

// reader.go owns one CPU's trace_pipe_raw: non-blocking page-size reads, decoded with
// that CPU's own Decoder (decoders keep per-run state and are not shared), handed to
// the merge with a watermark. When the buffer is empty the reader vouches for
// "nothing earlier than the moment I looked, less a small slack", so an idle CPU never
// holds the merge back for longer than one idle poll.

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
		return make([]tracefs.Event, 0, 128)
	}
}

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
	for {
		t0 := MonoNow()
		n, err := syscall.Read(fd, page)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN) || (err == nil && n == 0):
			if draining {
				r.out <- cpuChunk{src: r.src, wm: Done, done: true}
				return
			}
			r.out <- cpuChunk{src: r.src, wm: t0 - int64(IdleSlack)}
			select {
			case <-r.drain:
				// One more pass: tracing is off, read what is left, then stop.
				draining = true
			case <-time.After(IdlePoll):
			}
			continue
		case err != nil:
			r.out <- cpuChunk{src: r.src, err: fmt.Errorf("live: read %s: %w", r.path, err), done: true}
			return
		}
		evs, derr := r.d.DecodePage(page[:n], r.cpu, r.buf())
		if derr != nil {
			r.d.Stats.Skipped[tracefs.SkipBadPage]++
		}
		// Page-flagged losses are reported through the kernel's stats instead.
		k := 0
		for i := range evs {
			if evs[i].Kind == schema.KindLost {
				if evs[i].LostEvents > 0 {
					r.pageLost += evs[i].LostEvents
				}
				continue
			}
			evs[k] = evs[i]
			k++
		}
		r.out <- cpuChunk{src: r.src, evs: evs[:k]}
	}
}
