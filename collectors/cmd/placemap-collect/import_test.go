package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"placemap/collectors/internal/shareddata"
)

// Exit codes: 0 ok, 1 runtime/format error, 2 usage.
func TestImportExitCodes(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.arrow")
	var stderr bytes.Buffer
	if code := run([]string{"import", shareddata.Path(t, "traces", "zen3-2s-nps4-stream-excerpt-shortrun.ftrace.txt"), "--out", out}, &stderr); code != 0 {
		t.Fatalf("ok import: code %d: %s", code, stderr.String())
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Fatalf("output: %v", err)
	}
	for _, args := range [][]string{
		{"import"},
		{"import", "--out", out},
		{"import", shareddata.Path(t, "traces", "vm2-hackbench-g4.ftrace.txt.gz")},
		{"import", shareddata.Path(t, "traces", "vm2-hackbench-g4.ftrace.txt.gz"), "--out", out, "--format", "xml"},
		{"import", "--bogus"},
	} {
		stderr.Reset()
		if code := run(args, &stderr); code != 2 {
			t.Errorf("%v: code %d, want 2 (%s)", args, code, stderr.String())
		}
	}
	stderr.Reset()
	// a perf.data is read by its own decoder; forced through the text importer it is named
	if code := run([]string{"import", shareddata.Path(t, "traces", "vm2-hackbench-g2.perf.data"), "--out", out}, &stderr); code != 0 {
		t.Errorf("perf.data: code %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"import", shareddata.Path(t, "traces", "vm2-hackbench-g2.perf.data"), "--out", out, "--format", "perf"}, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "binary format not supported by text import") {
		t.Errorf("perf.data as perf script text: code %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"import", filepath.Join(dir, "missing.txt"), "--out", out}, &stderr); code != 1 {
		t.Errorf("missing file: code %d", code)
	}
}
