package mapfile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"placemap/collectors/internal/mapfile"
	"placemap/collectors/internal/shareddata"
)

// The mapping holds the file's bytes, as reading it whole gives them: a real perf.data here.
func TestMappedBytesAreTheFiles(t *testing.T) {
	path := shareddata.Path(t, "traces", "vm2-hackbench-g2.perf.data")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, done, err := mapfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || len(got) < 1<<20 {
		t.Fatalf("mapped %d bytes, the file has %d", len(got), len(want))
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
}

// An empty file cannot be mapped: it is read, as empty; a missing one is the open's error.
func TestEmptyAndMissingFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, done, err := mapfile.Open(empty)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty: %d bytes, %v", len(got), err)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mapfile.Open(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing: %v", err)
	}
}
