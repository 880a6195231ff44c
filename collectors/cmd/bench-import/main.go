// Command bench-import measures `placemap-collect import` throughput against the I/O
// ceiling and trace-cmd. It builds (once, under bench/out/) a ~10M-event ftrace text by
// concatenating time-shifted copies of ../shared/traces/vm2-hackbench-g4.ftrace.txt.gz,
// plain and gzipped, then prints labeled lines:
//
//	read+decompress only (the I/O ceiling), import events/s (plain, gz), end to end
//	file -> stored recording (plain, gz; the backend's upload path through
//	bench/e2e_import.py, with -e2e), and trace-cmd report per event on
//	vm2-hackbench-mixed.trace.dat when trace-cmd exists.
//
// Run it through bench/import_bench.sh.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

func main() {
	shared := flag.String("shared", "", "path of ../shared")
	out := flag.String("out", "", "bench output dir (bench/out)")
	bin := flag.String("bin", "", "placemap-collect binary")
	events := flag.Int("events", 10_000_000, "events in the generated trace")
	e2e := flag.String("e2e", "", "command (space-separated) that imports a file end to end and prints JSON (bench/e2e_import.py)")
	flag.Parse()
	if err := run(*shared, *out, *bin, *events, strings.Fields(*e2e)); err != nil {
		fmt.Fprintln(os.Stderr, "bench-import:", err)
		os.Exit(1)
	}
}

func run(shared, out, bin string, want int, e2e []string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	src := filepath.Join(shared, "traces", "vm2-hackbench-g4.ftrace.txt.gz")
	plain := filepath.Join(out, fmt.Sprintf("hackbench-%dM.ftrace.txt", want/1_000_000))
	gz := plain + ".gz"
	n, err := generate(src, plain, gz, want)
	if err != nil {
		return err
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average (other work on this machine skews wall times): %s", la)
	}
	fmt.Printf("input: %s (%d events, %d MB), %s (%d MB)\n", plain, n, size(plain)>>20, gz, size(gz)>>20)

	dp, dg := time.Duration(1<<62), time.Duration(1<<62)
	var t time.Time
	for i := 0; i < 2; i++ { // best of two, like the imports
		t = time.Now()
		if err := readAll(plain, false); err != nil {
			return err
		}
		dp = min(dp, time.Since(t))
		t = time.Now()
		if err := readAll(gz, true); err != nil {
			return err
		}
		dg = min(dg, time.Since(t))
	}
	fmt.Printf("read only (plain):           %6.2f s  %6.0f MB/s  %5.2f M events/s  (I/O ceiling)\n", dp.Seconds(), mbps(plain, dp), float64(n)/dp.Seconds()/1e6)
	fmt.Printf("read+decompress only (gz):   %6.2f s  %6.0f MB/s  %5.2f M events/s  (I/O ceiling)\n", dg.Seconds(), mbps(plain, dg), float64(n)/dg.Seconds()/1e6)
	arrow := filepath.Join(out, "bench.arrow")
	for _, in := range []struct{ label, path string }{{"plain", plain}, {"gz", gz}} {
		for _, dst := range []string{arrow, "-", "-chunks"} {
			// best of two: other work on the machine only ever adds time
			r, err := importOnce(bin, in.path, dst)
			if err != nil {
				return err
			}
			if r2, err := importOnce(bin, in.path, dst); err != nil {
				return err
			} else if r2.wall < r.wall {
				r = r2
			}
			ceil := dp
			if in.label == "gz" {
				ceil = dg
			}
			to := "--out FILE"
			switch dst {
			case "-":
				to = "--out - (pipe)"
			case "-chunks":
				to = "--chunks (pipe)"
			}
			fmt.Printf("import %-5s %-16s (best of 2) %6.2f s  %5.2f M events/s  cpu %5.2f s (%4.2f M events/cpu-s)  %.2fx the read-only time\n",
				in.label, to, r.wall.Seconds(), float64(r.events)/r.wall.Seconds()/1e6, r.cpu.Seconds(), float64(r.events)/r.cpu.Seconds()/1e6, r.wall.Seconds()/ceil.Seconds())
			if r.events != n {
				return fmt.Errorf("import of %s wrote %d events, want %d", in.path, r.events, n)
			}
		}
	}
	if len(e2e) > 0 {
		runs := []struct{ label, path, via string }{{"plain", plain, "chunks"}, {"gz", gz, "chunks"}, {"plain", plain, "arrow"}}
		for _, in := range runs {
			ceil := dp
			if in.label == "gz" {
				ceil = dg
			}
			var best e2eRun
			for i := 0; i < 2; i++ { // best of two, like the imports
				r, err := e2eOnce(append(e2e, "--via", in.via), in.path)
				if err != nil {
					return err
				}
				if i == 0 || r.Wall < best.Wall {
					best = r
				}
			}
			if best.Events != n {
				return fmt.Errorf("end-to-end import of %s stored %d events, want %d", in.path, best.Events, n)
			}
			what := "END TO END " + in.label + " file -> stored recording"
			if in.via == "arrow" {
				what = "  baseline: " + in.label + ", Arrow stream + chunks encoded in Python (the path before --chunks)"
			}
			fmt.Printf("%s (best of 2)  %6.2f s  %5.2f M events/s  cpu %5.2f s (%4.2f M events/cpu-s; importer %4.2f s, backend %4.2f s)  %.2fx the read-only time\n",
				what, best.Wall, float64(n)/best.Wall/1e6, best.CPU, float64(n)/best.CPU/1e6, best.CPUImporter, best.CPUPython, best.Wall/ceil.Seconds())
		}
	}
	// what writing an output of that size to a fresh file costs on this machine
	outBytes := size(arrow)
	t = time.Now()
	if err := writeZeros(filepath.Join(out, "write-ceiling.bin"), outBytes); err != nil {
		return err
	}
	dw := time.Since(t)
	os.Remove(filepath.Join(out, "write-ceiling.bin"))
	fmt.Printf("write only (%d MB fresh file): %6.2f s  %6.0f MB/s  (output I/O ceiling: %5.2f M events/s)\n", outBytes>>20, dw.Seconds(), float64(outBytes)/1e6/dw.Seconds(), float64(n)/dw.Seconds()/1e6)
	os.Remove(arrow)
	dat := filepath.Join(shared, "traces", "vm2-hackbench-mixed.trace.dat")
	if tc, err := exec.LookPath("trace-cmd"); err == nil {
		t = time.Now()
		cmd := exec.Command(tc, "report", "-i", dat)
		var buf bytes.Buffer
		cmd.Stdout = &buf
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("trace-cmd report: %w", err)
		}
		d := time.Since(t)
		ev := bytes.Count(buf.Bytes(), []byte("\n")) - 1 // the cpus= header
		fmt.Printf("trace-cmd report (trace.dat): %6.3f s  %5.0f ns/event  %5.2f M events/s  (%d events, vm2-hackbench-mixed.trace.dat)\n", d.Seconds(), float64(d.Nanoseconds())/float64(ev), float64(ev)/d.Seconds()/1e6, ev)
	} else {
		fmt.Println("trace-cmd report (trace.dat): skipped, trace-cmd not installed")
	}
	return nil
}

func size(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func mbps(p string, d time.Duration) float64 { return float64(size(p)) / 1e6 / d.Seconds() }

type importRun struct {
	wall, cpu time.Duration
	events    int
}

// importOnce runs one import to out: a file, "-" (an Arrow stream on a pipe) or
// "-chunks" (the backend's chunk frames on a pipe).
func importOnce(bin, in, out string) (importRun, error) {
	t := time.Now()
	args := []string{"import", in, "--out", out, "--json"}
	if out == "-chunks" {
		args = []string{"import", in, "--out", "-", "--chunks", "--json"}
	}
	cmd := exec.Command(bin, args...)
	var js bytes.Buffer
	if strings.HasPrefix(out, "-") {
		cmd.Stdout = io.Discard // a pipe the bench drains
		cmd.Stderr = &js
	} else {
		cmd.Stdout = &js
		cmd.Stderr = os.Stderr
	}
	err := cmd.Run()
	r := importRun{wall: time.Since(t)}
	if err != nil {
		return r, fmt.Errorf("import %s: %w: %s", in, err, js.String())
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var s struct {
		EventsTotal int `json:"events_total"`
	}
	if err := json.Unmarshal(js.Bytes(), &s); err != nil {
		return r, err
	}
	r.events = s.EventsTotal
	return r, nil
}

type e2eRun struct {
	Events      int     `json:"events"`
	Wall        float64 `json:"wall_s"`
	CPU         float64 `json:"cpu_s"`
	CPUPython   float64 `json:"cpu_python_s"`
	CPUImporter float64 `json:"cpu_importer_s"`
}

// e2eOnce runs the end-to-end command on one file; it times itself around the import.
func e2eOnce(cmdline []string, in string) (e2eRun, error) {
	var r e2eRun
	cmd := exec.Command(cmdline[0], append(cmdline[1:], in)...)
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	if err != nil {
		return r, fmt.Errorf("end-to-end import %s: %w", in, err)
	}
	lines := bytes.Split(bytes.TrimSpace(outb), []byte("\n"))
	return r, json.Unmarshal(lines[len(lines)-1], &r)
}

func writeZeros(p string, n int64) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := f.Write(buf[:k]); err != nil {
			f.Close()
			return err
		}
		n -= k
	}
	return f.Close()
}

func readAll(p string, gz bool) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if gz {
		z, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		r = z
	}
	buf := make([]byte, 4<<20)
	for {
		_, err := r.Read(buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// generate writes time-shifted copies of src (one header) until want events; it
// reuses existing files.
func generate(src, plain, gz string, want int) (int, error) {
	f, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return 0, err
	}
	data, err := io.ReadAll(z)
	if err != nil {
		return 0, err
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var header, body [][]byte
	for _, l := range lines {
		if len(l) > 0 && l[0] == '#' {
			header = append(header, l)
		} else if len(bytes.TrimSpace(l)) > 0 {
			body = append(body, l)
		}
	}
	copies := (want + len(body) - 1) / len(body)
	total := copies * len(body)
	if size(plain) > 0 && size(gz) > 0 {
		return total, nil
	}
	pf, err := os.Create(plain + ".tmp")
	if err != nil {
		return 0, err
	}
	gf, err := os.Create(gz + ".tmp")
	if err != nil {
		return 0, err
	}
	pw := bufio.NewWriterSize(pf, 4<<20)
	zw, _ := gzip.NewWriterLevel(gf, gzip.DefaultCompression)
	w := io.MultiWriter(pw, zw)
	for _, h := range header {
		w.Write(h)
	}
	var tmp []byte
	for c := 0; c < copies; c++ {
		for _, l := range body {
			tmp = shift(tmp[:0], l, int64(c))
			w.Write(tmp)
		}
	}
	if err := pw.Flush(); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	pf.Close()
	gf.Close()
	if err := os.Rename(plain+".tmp", plain); err != nil {
		return 0, err
	}
	return total, os.Rename(gz+".tmp", gz)
}

// shift adds secs seconds to the `SECS.USECS:` timestamp after the [CPU] column.
func shift(dst, l []byte, secs int64) []byte {
	i := bytes.IndexByte(l, ']')
	for i >= 0 && i < len(l) {
		j := bytes.IndexByte(l[i:], '.')
		if j < 0 {
			break
		}
		j += i
		s := j
		for s > 0 && l[s-1] >= '0' && l[s-1] <= '9' {
			s--
		}
		e := j + 1
		for e < len(l) && l[e] >= '0' && l[e] <= '9' {
			e++
		}
		if s < j && e < len(l) && l[e] == ':' {
			v, _ := strconv.ParseInt(string(l[s:j]), 10, 64)
			dst = append(dst, l[:s]...)
			dst = strconv.AppendInt(dst, v+secs, 10)
			return append(dst, l[j:]...)
		}
		i = e
	}
	return append(dst, l...)
}
