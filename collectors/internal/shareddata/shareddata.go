// Package shareddata finds ../shared, the real traces and topology dumps that sit beside the
// repo root, for the tests of every package. It walks up from the working directory (go test
// runs a package's tests in its directory), so it holds under -trimpath too.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Path is shared/REL... (rel joined), failing the test when the data is not there.
func Path(tb testing.TB, rel ...string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		root := filepath.Join(dir, "shared")
		if st, err := os.Stat(filepath.Join(root, "traces")); err == nil && st.IsDir() {
			p := filepath.Join(append([]string{root}, rel...)...)
			if _, err := os.Stat(p); err != nil {
				tb.Fatalf("shared test data missing: %v", err)
			}
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			tb.Fatal("test data missing: no shared/ beside the repo root (or above it)")
		}
		dir = up
	}
}
