package live

// run.go owns one collector run: instance setup, readers, the merge loop (10 Hz host
// records, batch cutting), the uplink, and the ordered shutdown that always leaves the
// tracefs as it was: tracing off, readers drained, final stats read, events disabled,
// instance removed, then the last batches acknowledged.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/topology"
	"placemap/collectors/internal/tracefs"
)

// Options of a run.
type Options struct {
	Server       string // ws://host:port/api/ingest (http(s):// and a bare host:port are accepted)
	Token        string
	Events       []string
	Duration     time.Duration // 0: until ctx ends
	BufferKB     int
	SpillDir     string
	MemLimit     int64 // bytes of unacknowledged batches kept in memory
	SpillLimit   int64 // bytes the spill file may grow to (0: 1 GiB); beyond, batches are dropped and reported as lost
	BatchRows    int
	BatchAge     time.Duration
	DrainTimeout time.Duration // how long to wait for the last acks at the end
	StatsOut     string        // write the final Summary here (JSON)
	TimingOut    string        // write each batch's cut and send times here (JSON lines, benches)
	Compress     bool          // IPC body compression (Codec)
	Codec        string        // "lz4" (default) or "zstd"
	Log          func(format string, args ...any)
	// Started, if set, is called once the instance is tracing (tests, benches).
	Started func(in *Instance)
}

// CPUSummary is one CPU's counts at the end of the run.
type CPUSummary struct {
	CPU          int   `json:"cpu"`
	Entries      int64 `json:"entries"`
	Overrun      int64 `json:"overrun"`
	Dropped      int64 `json:"dropped"`
	Read         int64 `json:"read"`
	Records      int64 `json:"records"` // data records decoded from this CPU's pages
	Events       int64 `json:"events"`  // events sent with this recording CPU
	LostReported int64 `json:"lost_reported"`
}

// Summary is what --stats-out writes: the kernel's own final per-CPU stats of the
// instance, read after the last drain and before the instance was removed, beside what
// the collector decoded and sent.
type Summary struct {
	Instance      string           `json:"instance"`
	SessionID     string           `json:"session_id"`
	RecordingID   string           `json:"recording_id"`
	Events        []string         `json:"events"`
	CPUs          []CPUSummary     `json:"cpus"`
	SentByKind    map[string]int64 `json:"sent_by_kind"`
	Rows          int64            `json:"rows"`
	Batches       int              `json:"batches"`
	Unacked       int              `json:"unacked"`
	Rejected      int              `json:"rejected"`
	RejectedRows  int              `json:"rejected_rows"`
	RejectReasons []string         `json:"reject_reasons"`
	Spilled       int              `json:"spilled"`
	SpillDropped  int              `json:"spill_dropped"`        // batches dropped at the spill cap
	DroppedRows   int              `json:"spill_dropped_rows"`   // their rows
	DroppedEvents int64            `json:"spill_dropped_events"` // their traced events, sent as lost records
	Reconnects    int              `json:"reconnects"`
	OutOfOrder    int              `json:"out_of_order"`
	Skipped       map[string]int   `json:"skipped"`
	PageLost      int64            `json:"page_lost"`
	Warnings      []string         `json:"warnings"`
	// MaxWaitMs is the longest an event waited in the collector (its timestamp to its batch's cut).
	MaxWaitMs float64 `json:"max_wait_ms"`
	// GoProcs is how many threads ran the collector's Go code at once (GOMAXPROCS; priority.go).
	GoProcs int               `json:"go_procs"`
	Extra   map[string]string `json:"extra,omitempty"`
}

// NormalizeURL turns a server address into the ingest websocket URL.
func NormalizeURL(s string) string {
	switch {
	case strings.HasPrefix(s, "http://"):
		s = "ws://" + s[len("http://"):]
	case strings.HasPrefix(s, "https://"):
		s = "wss://" + s[len("https://"):]
	case !strings.HasPrefix(s, "ws://") && !strings.HasPrefix(s, "wss://"):
		s = "ws://" + s
	}
	if !strings.Contains(strings.SplitN(strings.SplitN(s, "://", 2)[1], "?", 2)[0], "/") {
		s = strings.TrimSuffix(s, "/") + "/api/ingest"
	}
	return s
}

func sessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Run collects until ctx ends or the duration passes, then shuts down cleanly.
func Run(ctx context.Context, o Options) (sum *Summary, err error) {
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 16384
	}
	if o.BatchAge <= 0 {
		o.BatchAge = 100 * time.Millisecond
	}
	if o.MemLimit <= 0 {
		o.MemLimit = 64 << 20
	}
	if o.SpillLimit <= 0 {
		o.SpillLimit = 1 << 30
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 30 * time.Second
	}
	topo, err := topology.Read("/")
	if err != nil {
		return nil, fmt.Errorf("live: topology: %w", err)
	}
	t := topo.Topology
	kr := kernelRelease()
	if kr != "" && t.KernelRelease == nil {
		t.KernelRelease = &kr
	}
	root, err := FindTracefs()
	if err != nil {
		return nil, err
	}
	for _, n := range RemoveStale(root) {
		logf("removed the tracefs instance %s left by a collector that no longer runs", n)
	}
	in, err := Setup(root, Config{Events: o.Events, BufferKB: o.BufferKB})
	if err != nil {
		return nil, err
	}
	// Whatever happens below (errors, panics), the instance goes away.
	defer func() {
		if cerr := in.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	host, _ := os.Hostname()
	ver := "placemap-collect " + runtime.Version()
	sum = &Summary{Instance: in.Name, SessionID: sessionID(), Events: in.Events, SentByKind: map[string]int64{}, Skipped: map[string]int{}}
	out := NewOutbox(o.MemLimit, o.SpillDir, o.SpillLimit)
	defer out.Close()
	if o.TimingOut != "" {
		out.timing = NewTiming()
	}
	up := &Uplink{URL: NormalizeURL(o.Server), Out: out, Log: logf, Hello: schema.Hello{
		Token: o.Token, SessionID: sum.SessionID, Host: host, KernelRelease: kr,
		Topology: t, Events: in.Events, CollectorVersion: &ver,
	}}
	upCtx, upCancel := context.WithCancel(context.Background())
	defer upCancel()
	upErr := make(chan error, 1)
	go func() { upErr <- up.Run(upCtx) }()

	// Readers: one per CPU, each with its own decoder.
	n := len(in.CPUs)
	chunks := make(chan cpuChunk, 4*n+16)
	drain := make(chan struct{})
	readers := make([]*cpuReader, n)
	for i, c := range in.CPUs {
		d, err := in.Decoder()
		if err != nil {
			return sum, err
		}
		readers[i] = &cpuReader{src: i, cpu: int32(c), path: in.PipePath(c), d: d, out: chunks, free: make(chan []tracefs.Event, 64), drain: drain}
	}
	for _, r := range readers {
		go r.run()
	}
	running := n
	drained := false
	defer func() {
		// Error path: stop the readers so the instance can be removed.
		if !drained {
			drained = true
			_ = in.Stop()
			close(drain)
		}
		for running > 0 {
			if c := <-chunks; c.done {
				running--
			}
		}
	}()
	if o.Started != nil {
		o.Started(in)
	}

	var opts []ipc.Option
	if o.Compress {
		switch o.Codec {
		case "", "lz4":
			opts = append(opts, ipc.WithLZ4())
		case "zstd":
			opts = append(opts, ipc.WithZstd())
		default:
			return sum, fmt.Errorf("live: unknown codec %q (lz4 or zstd)", o.Codec)
		}
	}
	bat := NewBatcher(o.BatchRows, opts...)
	host0 := n // the merge source of host records (llc_util, lost)
	m := NewMerger(n + 1)
	util := &UtilSampler{Path: "/proc/stat"}
	for _, l := range t.Llcs {
		util.LLCs = append(util.LLCs, l.Cpus)
	}
	lost := &LostTracker{CPUs: in.CPUs}
	var hostEvs []tracefs.Event
	pushHost := func(final bool) error {
		now := MonoNow()
		hostEvs = hostEvs[:0]
		if !final {
			hostEvs = util.Sample(now, hostEvs)
		}
		st, err := in.Stats()
		if err != nil {
			return err
		}
		hostEvs = lost.Update(now, st, hostEvs)
		// Batches the spill cap dropped: their events go out as lost records of their CPUs.
		if d := out.TakeDropped(); d != nil {
			for _, c := range in.CPUs {
				if n := d[int32(c)]; n > 0 {
					hostEvs = append(hostEvs, tracefs.Event{TsNs: now, CPU: int32(c), Kind: schema.KindLost, LostEvents: n})
				}
			}
		}
		evs := append([]tracefs.Event(nil), hostEvs...)
		wm := now
		if final {
			wm = Done
		}
		m.Push(host0, evs, wm, nil)
		return nil
	}
	if err := pushHost(false); err != nil {
		return sum, err
	}
	var late lateness
	cut := func(b *Batch) error {
		if late.seen(b) {
			logf("events are leaving the collector %.1f s after they happened: its threads wait for CPU behind the workload (--realtime PRIO keeps them prompt; the server has serve --realtime)",
				float64(b.CutNs-b.FirstTs)/1e9)
		}
		return out.Add(b)
	}
	emit := func() error {
		// The host source records only at its 10 Hz ticks, each at MonoNow(): it can vouch for
		// now, so the merge does not wait up to a tick for it.
		m.Push(host0, nil, MonoNow(), nil)
		if err := m.Emit(func(ev *tracefs.Event) error {
			b, err := bat.Add(ev)
			if err != nil || b == nil {
				return err
			}
			return cut(b)
		}); err != nil {
			return err
		}
		if bat.Age() >= int64(o.BatchAge) {
			if b, err := bat.Flush(); err != nil {
				return err
			} else if b != nil {
				return cut(b)
			}
		}
		return nil
	}
	var deadline <-chan time.Time
	if o.Duration > 0 {
		deadline = time.After(o.Duration)
	}
	tick := time.NewTicker(100 * time.Millisecond) // 10 Hz host records
	defer tick.Stop()
	flush := time.NewTicker(20 * time.Millisecond)
	defer flush.Stop()
	var readErr, fatal error
	upEnded := false
	stopping := false
	for running > 0 {
		var stopC <-chan struct{}
		if !stopping {
			stopC = ctx.Done()
		}
		select {
		case c := <-chunks:
			if c.err != nil && readErr == nil {
				readErr = c.err
			}
			if c.done {
				running--
				m.Push(c.src, nil, Done, nil)
				if c.err != nil && !stopping {
					stopping = true
					_ = in.Stop()
					drained = true
					close(drain)
				}
				continue
			}
			r := readers[c.src]
			m.Push(c.src, c.evs, c.wm, r.recycle)
		case <-stopC:
			stopping = true
		case e := <-upErr:
			// Only a refusal ends Run early (it retries everything else): stop collecting.
			upEnded, fatal, stopping = true, e, true
		case <-deadline:
			stopping = true
		case <-tick.C:
			if err := pushHost(false); err != nil {
				return sum, err
			}
			if err := emit(); err != nil {
				return sum, err
			}
		case <-flush.C:
			if err := emit(); err != nil {
				return sum, err
			}
		}
		if stopping && !drained {
			// Stop recording; the readers read what is left and stop.
			if err := in.Stop(); err != nil {
				return sum, err
			}
			drained = true
			close(drain)
		}
	}
	// Final stats: after the last drain, before the instance goes away.
	st, err := in.Stats()
	if err != nil {
		return sum, err
	}
	if err := pushHost(true); err != nil {
		return sum, err
	}
	if err := emit(); err != nil {
		return sum, err
	}
	if b, err := bat.Flush(); err != nil {
		return sum, err
	} else if b != nil {
		if err := out.Add(b); err != nil {
			return sum, err
		}
	}
	// What the spill cap dropped since the last host records: one last small batch of lost
	// records, kept past the cap, so every dropped event is reported.
	if d := out.TakeDropped(); d != nil {
		now := MonoNow()
		for _, c := range in.CPUs {
			if n := d[int32(c)]; n > 0 {
				if _, err := bat.Add(&tracefs.Event{TsNs: now, CPU: int32(c), Kind: schema.KindLost, LostEvents: n}); err != nil {
					return sum, err
				}
			}
		}
		if b, err := bat.Flush(); err != nil {
			return sum, err
		} else if b != nil {
			if err := out.AddPastCap(b); err != nil {
				return sum, err
			}
		}
	}
	for i, c := range in.CPUs {
		r := readers[i]
		cs := CPUSummary{CPU: c, Entries: st[i].Entries, Overrun: st[i].Overrun, Dropped: st[i].Dropped, Read: st[i].Read,
			Records: int64(r.d.Stats.Records[int32(c)]), Events: bat.ByCPU[int32(c)], LostReported: lost.Total[i]}
		sum.CPUs = append(sum.CPUs, cs)
		for k, v := range r.d.Stats.Skipped {
			sum.Skipped[k] += v
		}
		sum.PageLost += r.pageLost
		sum.Warnings = append(sum.Warnings, r.d.Stats.Warnings...)
	}
	for k, v := range bat.ByKind {
		if v > 0 {
			sum.SentByKind[schema.KindNames[k]] = v
		}
	}
	sum.Rows, sum.Batches, sum.OutOfOrder = bat.Rows, bat.next, m.OutOfOrder
	sum.MaxWaitMs = float64(late.MaxNs) / 1e6
	sum.GoProcs = runtime.GOMAXPROCS(0)
	// Leave tracefs as it was before waiting on the network.
	if cerr := in.Close(); cerr != nil {
		return sum, cerr
	}
	up.Finish()
	uerr := fatal
	if !upEnded {
		select {
		case uerr = <-upErr:
		case <-time.After(o.DrainTimeout):
			upCancel()
			uerr = <-upErr
			uerr = fmt.Errorf("live: %d batches were not acknowledged within %v: %w", out.Len(), o.DrainTimeout, uerr)
		}
	}
	sum.RecordingID = up.RecordingID()
	sum.Unacked = out.Len()
	sum.Rejected, sum.RejectedRows, sum.RejectReasons, sum.Spilled, sum.Reconnects = out.Rejected, out.RejRows, out.Reasons, out.Spilled, up.Reconnects
	sum.SpillDropped, sum.DroppedRows, sum.DroppedEvents = out.Dropped, out.DroppedRows, out.DroppedEvents
	if o.StatsOut != "" {
		b, _ := json.MarshalIndent(sum, "", "  ")
		if werr := os.WriteFile(o.StatsOut, append(b, '\n'), 0o644); werr != nil {
			uerr = errors.Join(uerr, werr)
		}
	}
	if werr := out.timing.Write(o.TimingOut); werr != nil {
		uerr = errors.Join(uerr, werr)
	}
	if readErr != nil {
		return sum, readErr
	}
	return sum, uerr
}
