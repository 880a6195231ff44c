package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"placemap/collectors/internal/live"
)

// runLive implements `placemap-collect live --server URL --token T [...]`.
func runLive(args []string) error {
	fs := flag.NewFlagSet("live", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("server", "", "backend address: ws://HOST:PORT (the ingest path /api/ingest is added), http://HOST:PORT, or a full ws:// URL")
	token := fs.String("token", os.Getenv("PLACEMAP_TOKEN"), "ingest token (`bin/placemap token create`); default $PLACEMAP_TOKEN")
	events := fs.String("events", strings.Join(live.DefaultEvents, ","), "comma-separated sched tracepoints to enable")
	duration := fs.Duration("duration", 0, "stop after this long (e.g. 30s); default: until SIGINT/SIGTERM")
	bufKB := fs.Int("buffer-kb", 8192, "per-CPU ring-buffer size of the collector's tracefs instance, KiB")
	spill := fs.String("spill-dir", os.TempDir(), "where batches wait on disk while the backend is away")
	memMB := fs.Int("mem-mb", 64, "unacknowledged batches kept in memory before spilling, MiB")
	spillMB := fs.Int("spill-mb", 1024, "cap of the spill file, MiB: beyond it batches are dropped and sent as lost records once the backend is back")
	statsOut := fs.String("stats-out", "", "write the final per-CPU kernel stats and what was sent (JSON) to FILE")
	timingOut := fs.String("timing-out", "", "write each batch's cut and send times (JSON lines, CLOCK_MONOTONIC) to FILE, for benchmarks")
	drain := fs.Duration("drain-timeout", 30*time.Second, "how long to wait at the end for the backend to acknowledge everything")
	compress := fs.Bool("compress", true, "compress the Arrow IPC batches' buffers on the wire (--codec)")
	codec := fs.String("codec", "lz4", "batch compression: lz4 (less CPU on the traced host and the server) or zstd (about 40% fewer bytes on the wire and in the live store)")
	quiet := fs.Bool("quiet", false, "only print errors")
	nice := fs.Int("nice", live.DefaultNice, "scheduling nice value of the collector (needs root below 0): it must keep up with the events while the workload keeps the CPUs busy")
	realtime := fs.Int("realtime", 0, "run every thread SCHED_FIFO at this priority (1-99, needs root; like perf record -r): keeps the collector's latency low while a workload in another session or cgroup saturates the CPUs, where --nice does not reach; 0: off")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(os.Stderr, "usage: placemap-collect live --server URL --token T [--events LIST] [--duration D] [--buffer-kb N] [--spill-dir DIR] [--stats-out FILE]")
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return err
		}
		return usageError("live: %v", err)
	}
	if fs.NArg() > 0 {
		return usageError("live: unexpected argument %q", fs.Arg(0))
	}
	if *server == "" {
		return usageError("live: --server is required")
	}
	if *token == "" {
		return usageError("live: --token (or PLACEMAP_TOKEN) is required")
	}
	if *codec != "lz4" && *codec != "zstd" {
		return usageError("live: --codec must be lz4 or zstd, not %q", *codec)
	}
	if *realtime != 0 && (*realtime < live.MinRealtime || *realtime > live.MaxRealtime) {
		return usageError("live: --realtime must be %d..%d (or 0: off), not %d", live.MinRealtime, live.MaxRealtime, *realtime)
	}
	logf := func(format string, a ...any) {
		if !*quiet {
			fmt.Fprintf(os.Stderr, "placemap-collect: live: "+format+"\n", a...)
		}
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(live.Procs(runtime.NumCPU()))
	}
	if err := live.SetNice(*nice); err != nil {
		logf("could not set the collector's priority (%v): its events may reach the viewers late while the CPUs are busy", err)
	}
	if *realtime != 0 {
		if err := live.SetRealtime(*realtime); err != nil {
			return fmt.Errorf("live: --realtime: %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	var evs []string
	for _, e := range strings.Split(*events, ",") {
		if e = strings.TrimSpace(e); e != "" {
			evs = append(evs, e)
		}
	}
	sum, err := live.Run(ctx, live.Options{
		Server: *server, Token: *token, Events: evs, Duration: *duration, BufferKB: *bufKB,
		SpillDir: *spill, MemLimit: int64(*memMB) << 20, SpillLimit: int64(*spillMB) << 20, DrainTimeout: *drain, StatsOut: *statsOut,
		TimingOut: *timingOut,
		Compress:  *compress, Codec: *codec, Log: logf,
		Started: func(in *live.Instance) {
			logf("tracing %d CPUs in %s (%s), sending to %s", len(in.CPUs), in.Dir, strings.Join(in.Events, ","), live.NormalizeURL(*server))
		},
	})
	if sum != nil {
		var lost int64
		for _, c := range sum.CPUs {
			lost += c.LostReported
		}
		logf("done: %d events in %d batches to recording %s, %d lost in the kernel, %d rejected, %d unacknowledged, longest wait in the collector %.0f ms; instance %s removed",
			sum.Rows, sum.Batches, sum.RecordingID, lost, sum.RejectedRows, sum.Unacked, sum.MaxWaitMs, sum.Instance)
	}
	if err != nil {
		return errors.New("live: " + strings.TrimPrefix(err.Error(), "live: "))
	}
	return nil
}
