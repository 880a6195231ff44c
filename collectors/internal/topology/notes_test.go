package topology

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestNotes: which notes the real dumps in ../shared/topologies get (the facts their
// PROVENANCE or expected output state: offline CPUs, CPU-less nodes, SNC, missing cache or
// distance files), and that a plain machine gets none.
func TestNotes(t *testing.T) {
	cases := []struct {
		dump, root string
		want       []string // each a substring of one note, in this order
	}{
		{"vm2-sysfs-topology", ".", nil},
		{"cri-resource-manager__topology-aware-sysfs", "sysfs/desktop", nil},
		{"cri-resource-manager__topology-aware-sysfs", "sysfs/4-socket-server-nosnc", nil},
		{"hwloc__linux__offline-cpu0-node0", "offline-cpu0-node0", []string{
			"CPUs 0-3,21-23 were offline",
			"CPUs 0,2,4,6,8,10,12,14,16,18,20,22 belong to no NUMA node present",
		}},
		{"cri-resource-manager__topology-aware-sysfs", "sysfs/server", []string{
			"NUMA nodes 4-5 have no CPUs",
			"sub-NUMA clustering (SNC/NPS): LLC 0 spans nodes 0,2; LLC 1 spans nodes 1,3.",
		}},
		{"cri-resource-manager__cpuallocator-sysfs", "sysfs/2-socket-4-node-40-core", []string{
			"sub-NUMA clustering (SNC/NPS): LLC 0 spans nodes 0-1; LLC 1 spans nodes 2-3.",
		}},
		{"util-linux-lscpu__ppc64-POWER7-64cpu", "ppc64-POWER7-64cpu", []string{
			"NUMA node 1 has no CPUs",
			"no distance file for nodes 0-1",
			"sysfs lists only level-1 caches",
		}},
		{"util-linux-lscpu__rv64-milkvpioneer", "rv64-milkvpioneer", []string{
			"no distance file for nodes 0-3",
			"no cache information under",
		}},
		{"util-linux-lscpu__arm-A510-A710-A715-X3", "arm-A510-A710-A715-X3", []string{
			"no NUMA nodes under",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.dump+"/"+tc.root, func(t *testing.T) {
			res, err := loadDump(t, tc.dump).read(tc.root)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Topology.Notes
			if len(got) != len(tc.want) {
				t.Fatalf("%d notes, want %d: %q", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("note %d = %q, want it to contain %q", i, got[i], w)
				}
			}
			// every warning the reader printed to stderr is kept with the topology
			for _, w := range res.Warnings {
				if !slices.Contains(got, w) {
					t.Errorf("warning %q is not among the notes", w)
				}
			}
		})
	}
}

// TestNotesInJSON: notes are written as "notes" when present and left out when there are none
// (older readers of topology.schema.json never see an empty list).
func TestNotesInJSON(t *testing.T) {
	for _, tc := range []struct {
		dump, root string
		present    bool
	}{
		{"vm2-sysfs-topology", ".", false},
		{"hwloc__linux__offline-cpu0-node0", "offline-cpu0-node0", true},
	} {
		res, err := loadDump(t, tc.dump).read(tc.root)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res.Topology)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		notes, ok := m["notes"].([]any)
		if ok != tc.present || ok && len(notes) != len(res.Topology.Notes) {
			t.Errorf("%s: notes in JSON = %v (present %v), want present %v", tc.dump, m["notes"], ok, tc.present)
		}
	}
}
