// Package importer turns trace text (ftrace `trace`/`trace_pipe`, `trace-cmd report`,
// `perf script`; plain or gzip) into placemap's Arrow event stream plus an
// ImportSummary.
//
// Pipeline: a reader goroutine decompresses and cuts the input into chunks of whole
// lines (input.go); parse workers, one per core, turn chunks into column buffers
// (parse.go, ftrace.go, perf.go, fields.go); the caller's goroutine takes results in
// input order, fixes what crosses chunk borders, merges statistics (summary.go) and
// writes record batches (writer.go).
//
// Choices worth knowing:
//   - Text after an event's last known field (LKML hand annotations `*LLC: 9 -> 3`,
//     `<--- ...`) does not cost the event: it is kept, and a summary warning counts
//     such lines with their first line numbers. Whole lines that are not trace lines
//     are skipped as `annotation`.
//   - Out-of-order input (concatenated files, per-CPU skew) is counted in out_of_order
//     and the output is sorted stably by ts_ns regardless: a file output is re-read and
//     rewritten at the end (only unsorted inputs pay, in memory); `--out -` holds the
//     first holdRows rows, sorting them if needed, and refuses disorder after that
//     with a named error, since it cannot take back what it streamed.
//   - Lost records (`CPU:N [LOST N EVENTS]`, trace-cmd's EVENTS DROPPED, perf's
//     PERF_RECORD_LOST) take the timestamp of the trace line before them; a header's
//     entries-written minus entries-in-buffer becomes one lost row (cpu -1) dated at
//     the file's first event.
//   - Leading spaces of a comm are lost where the format pads the column (the TASK
//     column, trace-cmd's padding after the event name); everything else about the 15
//     comm bytes is kept, non-UTF-8 bytes as \xNN.
package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"placemap/collectors/internal/schema"
)

// holdRows is how many rows `--out -` holds (and sorts when needed) before streaming.
var holdRows = 1 << 20

// Options configure one import.
type Options struct {
	Files    []string
	Format   Format
	Out      string    // path, or "-" for Stdout
	Stdout   io.Writer // where "-" writes
	Progress io.Writer // JSON progress lines, nil for none
	Workers  int       // parse goroutines; 0 = GOMAXPROCS
	// Chunks makes `-` carry the store's compressed chunks (chunkout.go) instead of
	// an Arrow IPC stream; it needs Out "-".
	Chunks bool
}

// Run imports opts.Files and returns the summary. Errors wrapping ErrFormat mean the
// input cannot be read exactly; no output file is left behind on error.
func Run(opts Options) (*schema.ImportSummary, error) {
	if len(opts.Files) == 0 {
		return nil, errors.New("no input files")
	}
	if opts.Format == "" {
		opts.Format = FormatAuto
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	var total int64
	for _, p := range opts.Files {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%w: %s is a directory (a tracefs capture directory is a binary format; import its trace text)", ErrFormat, p)
		}
		total += st.Size()
	}
	if opts.Chunks && opts.Out != "-" {
		return nil, errors.New("chunk output (--chunks) goes to --out - only")
	}
	// File output goes to OUT.partial, renamed on success; `-` streams to Stdout.
	var f *os.File
	var sink io.Writer = opts.Stdout
	stream := opts.Out == "-"
	if !stream {
		var err error
		if f, err = os.Create(opts.Out + ".partial"); err != nil {
			return nil, err
		}
		sink = f
	}
	ok := false
	defer func() {
		if f != nil {
			name := f.Name()
			f.Close()
			if !ok {
				os.Remove(name)
			}
		}
	}()

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	rd := &reader{paths: opts.Files, want: opts.Format, tokens: make(chan struct{}, 2*workers+2), bufs: make(chan []byte, 2*workers+4)}
	rd.chunkBytes.Store(initialChunk)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chunks := make(chan *chunk, workers)
	results := make(chan *result, workers)
	var rerr error
	var rdone sync.WaitGroup
	rdone.Add(1)
	go func() { defer rdone.Done(); rerr = rd.run(ctx, chunks) }()
	// a free list, not a sync.Pool: a pool is emptied at every GC, and each fresh
	// batch then costs its megabytes again in page faults
	colsPool := newFreeList(newCols, 4*workers+8)
	getCols := func(rows int) *cols { c := colsPool.get(); c.reset(rows); return c }
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{}
			for ck := range chunks {
				results <- w.parse(ck, getCols)
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	var events atomic.Int64
	stopProgress := startProgress(opts.Progress, &rd.bytesRead, total, &events)
	var ow batchSink
	if opts.Chunks {
		widenPipe(sink)
		ow = newChunkOut(sink, workers)
	} else {
		ow = newOutWriter(sink)
	}
	defer ow.abort() // a no-op once closed
	var rc recorder  // wraps held rows for sorting
	var m merged
	var werr error
	pending := map[int]*result{}
	next := 0
	lineBase := 0 // lines of the chunks taken so far
	var bytesIn, rowsOut int64
	// Streaming cannot take back what it wrote, so it holds the first holdRows rows
	// (sorted if they are out of order) and then refuses later disorder.
	holding := stream
	var held []*cols
	heldRows := 0
	hasFrontier, frontier := false, int64(0)
	recycle := func(cs []*cols) {
		for _, c := range cs {
			colsPool.put(c)
		}
	}
	flushHeld := func() error {
		defer func() { recycle(held); held = nil }()
		if m.ooo == 0 {
			for _, c := range held {
				if err := ow.write(c); err != nil {
					return err
				}
			}
		} else {
			recs := make([]arrow.RecordBatch, 0, len(held))
			for _, c := range held {
				recs = append(recs, rc.record(c))
			}
			err := writeSorted(recs, ow)
			for _, r := range recs {
				r.Release()
			}
			if err != nil {
				return err
			}
		}
		hasFrontier, frontier = m.hasTs, m.maxTs
		return nil
	}
	for r := range results {
		pending[r.seq] = r
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			for _, c := range r.batch {
				for _, i := range c.pendingTs {
					t := int64(0)
					if m.hasLastSeen {
						t = m.lastSeen
					} else if r.st.hasTs {
						t = r.st.firstTs
					}
					c.ts[i] = t
					m.tsSeen(t)
				}
				rowsOut += int64(c.n)
			}
			r.st.shiftLines(lineBase)
			lineBase += r.lines
			m.add(r)
			switch {
			case werr != nil:
				recycle(r.batch)
			case holding:
				held = append(held, r.batch...)
				for _, c := range r.batch {
					heldRows += c.n
				}
				if heldRows >= holdRows {
					holding = false
					werr = flushHeld()
				}
			case stream && r.st.hasTs && (r.st.ooo > 0 || (hasFrontier && r.st.minTs < frontier)):
				werr = fmt.Errorf("%w: the input goes back in time after the first %d events, which --out - had already streamed; import to a file (--out X.arrow) to have it sorted", ErrFormat, heldRows)
				recycle(r.batch)
			default:
				for _, c := range r.batch {
					if werr == nil {
						werr = ow.write(c)
					}
				}
				recycle(r.batch)
				if r.st.hasTs && (!hasFrontier || r.st.maxTs > frontier) {
					hasFrontier, frontier = true, r.st.maxTs
				}
			}
			if werr != nil {
				cancel()
			}
			events.Store(rowsOut)
			bytesIn += int64(len(r.ck.data))
			if rowsOut > 1000 {
				// aim chunks at ~BatchRows rows
				t := bytesIn * schema.BatchRows / rowsOut * 97 / 100
				rd.chunkBytes.Store(max(minChunk, min(maxChunk, t)))
			}
			rd.putBuf(r.ck.buf[:0])
			<-rd.tokens
		}
	}
	rdone.Wait()
	rd.release() // every chunk is parsed: no row points into a mapped file
	stopProgress()
	if werr != nil {
		return nil, werr // the reader then only reports the cancellation
	}
	if rerr != nil {
		return nil, rerr
	}
	if holding {
		if err := flushHeld(); err != nil {
			return nil, err
		}
	}
	if err := ow.close(); err != nil {
		return nil, err
	}
	if !stream && m.ooo > 0 {
		dst, err := os.Create(opts.Out + ".sorted.partial")
		if err != nil {
			return nil, err
		}
		if err := resort(f, dst); err != nil {
			dst.Close()
			os.Remove(dst.Name())
			return nil, err
		}
		name := f.Name()
		f.Close()
		os.Remove(name)
		f = dst
	}
	if !stream {
		if err := f.Close(); err != nil {
			return nil, err
		}
		if err := os.Rename(f.Name(), opts.Out); err != nil {
			return nil, err
		}
		f = nil
	}
	ok = true
	format := rd.infos[0].format
	return m.summary(format, opts.Files, rd.infos, rd.warnings), nil
}

// startProgress prints {"bytes_read":N,"bytes_total":M,"events":K} lines every 0.25 s
// and once at the end.
func startProgress(w io.Writer, read *atomic.Int64, total int64, events *atomic.Int64) func() {
	if w == nil {
		return func() {}
	}
	type line struct {
		BytesRead  int64 `json:"bytes_read"`
		BytesTotal int64 `json:"bytes_total"`
		Events     int64 `json:"events"`
	}
	enc := json.NewEncoder(w)
	emit := func() { _ = enc.Encode(line{read.Load(), total, events.Load()}) }
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				emit()
			case <-done:
				emit()
				return
			}
		}
	}()
	return func() { close(done); <-stopped }
}
