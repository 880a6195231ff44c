package live

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tracefsRoot skips (saying why) only where tracefs truly cannot be used.
func tracefsRoot(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: tracefs instances can only be created by root")
	}
	root, err := FindTracefs()
	if err != nil {
		t.Skipf("no usable tracefs: %v", err)
	}
	return root
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// The instance is ours alone: its events are on in it, the top-level buffer's events
// and tracing state are untouched, and Close leaves no instance behind.
func TestInstanceSetupAndCleanup(t *testing.T) {
	root := tracefsRoot(t)
	topEvents := read(t, filepath.Join(root, "set_event"))
	topOn := read(t, filepath.Join(root, "tracing_on"))
	in, err := Setup(root, Config{BufferKB: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.Name != "placemap-"+strconv.Itoa(os.Getpid()) {
		t.Errorf("instance %q", in.Name)
	}
	if got := read(t, filepath.Join(in.Dir, "events/sched/sched_switch/enable")); got != "1" {
		t.Errorf("sched_switch enable in the instance = %q", got)
	}
	// The kernel rounds the size up to whole pages (and may add one).
	if got, _ := strconv.Atoi(read(t, filepath.Join(in.Dir, "buffer_size_kb"))); got < 512 || got > 520 {
		t.Errorf("buffer_size_kb = %d", got)
	}
	if got := read(t, filepath.Join(in.Dir, "trace_clock")); !strings.Contains(got, "[mono]") {
		t.Errorf("trace_clock = %q", got)
	}
	if got := read(t, filepath.Join(root, "set_event")); got != topEvents {
		t.Errorf("top-level set_event changed: %q -> %q", topEvents, got)
	}
	if len(in.CPUs) == 0 {
		t.Fatal("no per_cpu directories")
	}
	d, err := in.Decoder()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.FormatErrors()) != 0 {
		t.Errorf("format errors: %v", d.FormatErrors())
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(in.Dir); !os.IsNotExist(err) {
		t.Fatalf("instance %s still exists after Close (%v)", in.Dir, err)
	}
	if got := read(t, filepath.Join(root, "set_event")); got != topEvents {
		t.Errorf("top-level set_event changed: %q -> %q", topEvents, got)
	}
	if got := read(t, filepath.Join(root, "tracing_on")); got != topOn {
		t.Errorf("top-level tracing_on changed: %q -> %q", topOn, got)
	}
	if err := in.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// An unknown tracepoint is a clear error and leaves nothing behind.
func TestInstanceBadEventCleansUp(t *testing.T) {
	root := tracefsRoot(t)
	_, err := Setup(root, Config{Events: []string{"sched_switch", "sched_no_such_event"}})
	if err == nil || !strings.Contains(err.Error(), "sched_no_such_event") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "instances", "placemap-"+strconv.Itoa(os.Getpid()))); !os.IsNotExist(err) {
		t.Fatalf("instance left behind after a failed setup (%v)", err)
	}
}

// The real binary, stopped by SIGTERM or SIGINT while it cannot reach its backend,
// disables its events and removes its instance.
func TestBinarySignalCleansUp(t *testing.T) {
	root := tracefsRoot(t)
	bin := filepath.Join(t.TempDir(), "placemap-collect")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/placemap-collect")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(bin, "live", "--server", "ws://127.0.0.1:1", "--token", "t", "--drain-timeout", "1s", "--quiet", "--spill-dir", t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, "instances", "placemap-"+strconv.Itoa(cmd.Process.Pid))
		deadline := time.Now().Add(20 * time.Second)
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "tracing_on")); err == nil && strings.TrimSpace(string(b)) == "1" {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("instance %s never started tracing", dir)
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = cmd.Process.Signal(sig)
		err := cmd.Wait()
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Fatalf("%v: instance %s left behind (%v)", sig, dir, serr)
		}
		// It exits non-zero: its batches were never acknowledged, and it says so.
		if err == nil {
			t.Errorf("%v: exit status 0 although nothing was acknowledged", sig)
		}
	}
}
