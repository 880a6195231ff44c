package main

// import.go owns the `import` subcommand: flags, output routing, the JSON summary.
// The work is in internal/importer.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"placemap/collectors/internal/importer"
	"placemap/collectors/internal/tracefs/rawimport"
)

const importUsage = `usage: placemap-collect import FILE... [--format auto|ftrace|tracecmd|perf|tracefs-raw|tracedat|perfdata] --out X.arrow [--json] [--progress] [--instance NAME] [--chunks]

Reads ftrace text (cat trace / trace_pipe), trace-cmd report text or perf script text,
plain or gzip, a raw tracefs capture directory (per_cpu/cpuN.raw + events/) or a
trace-cmd trace.dat, and writes placemap's events as an Arrow IPC stream.
  --instance NAME  trace.dat: decode only this buffer ("top" or an instance name);
                   default: every buffer, merged (the summary's header.buffers lists them)
  --out PATH     output file, or - for stdout (then --json goes to stderr)
  --json         print the import summary (one JSON object)
  --progress     print {"bytes_read":N,"bytes_total":M,"events":K} lines to stderr every 0.25 s
  --chunks       with --out -: write the store's chunks (65,536 rows, dictionary-encoded
                 strings, zstd Arrow IPC) as frames instead of one Arrow stream (the backend's
                 import path; format in collectors/internal/importer/chunkout.go)
`

func runImport(args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "auto", "")
	out := fs.String("out", "", "")
	asJSON := fs.Bool("json", false, "")
	progress := fs.Bool("progress", false, "")
	instance := fs.String("instance", "", "")
	chunks := fs.Bool("chunks", false, "")
	// flags may come after the files: parse repeatedly
	var files []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(os.Stderr, importUsage)
				return err
			}
			return usageError("import: %v\n%s", err, importUsage)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		files = append(files, rest[0])
		rest = rest[1:]
	}
	if len(files) == 0 {
		return usageError("import: no input FILE\n%s", importUsage)
	}
	if *out == "" {
		return usageError("import: --out is required\n%s", importUsage)
	}
	if *chunks && *out != "-" {
		return usageError("import: --chunks writes to --out - only\n%s", importUsage)
	}
	// Binary inputs go to the ring-buffer decoder (internal/tracefs/rawimport).
	bin := *format
	if bin == "auto" && len(files) == 1 {
		bin = rawimport.Detect(files[0])
	}
	if bin == rawimport.FormatTracefsRaw || bin == rawimport.FormatTracedat || bin == rawimport.FormatPerfdata {
		if len(files) != 1 {
			return usageError("import: --format %s takes exactly one input", bin)
		}
		var stdout io.Writer = os.Stdout
		var conv io.WriteCloser
		if *chunks {
			// the decoder writes an Arrow stream; re-cut it into chunk frames
			conv = importer.NewChunkConverter(os.Stdout)
			stdout = conv
		}
		sum, err := rawimport.Run(rawimport.Options{Path: files[0], Format: bin, Out: *out, Stdout: stdout, Instance: *instance})
		if conv != nil {
			if cerr := conv.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		if *asJSON {
			w := io.Writer(os.Stdout)
			if *out == "-" {
				w = os.Stderr
			}
			if err := json.NewEncoder(w).Encode(sum); err != nil {
				return fmt.Errorf("import: %w", err)
			}
		}
		return nil
	}
	if *instance != "" {
		return usageError("import: --instance applies to trace.dat files only")
	}
	f := importer.Format(*format)
	switch f {
	case importer.FormatAuto, importer.FormatFtrace, importer.FormatTracecmd, importer.FormatPerf:
	default:
		return usageError("import: --format %q: want auto, ftrace, tracecmd, perf, tracefs-raw, tracedat or perfdata", *format)
	}
	opts := importer.Options{Files: files, Format: f, Out: *out, Stdout: os.Stdout, Chunks: *chunks}
	if *progress {
		opts.Progress = os.Stderr
	}
	if p := os.Getenv("PLACEMAP_CPUPROFILE"); p != "" {
		// developer aid for bench/import_bench.sh investigations
		pf, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	sum, err := importer.Run(opts)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if *asJSON {
		w := io.Writer(os.Stdout)
		if *out == "-" {
			w = os.Stderr
		}
		enc := json.NewEncoder(w)
		if err := enc.Encode(sum); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	return nil
}
