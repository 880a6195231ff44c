package topology

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"placemap/collectors/internal/schema"
	"placemap/collectors/internal/shareddata"
)

// sharedDir is ../shared beside the repository root, computed from this file's location
// (the CI clone has shared/ there too).
func sharedDir(t testing.TB) string {
	return filepath.Dir(filepath.Dir(shareddata.Path(t, "topologies", "extract.sh")))
}

// dump is one tarball of ../shared/topologies (or the dev VM's), loaded into memory.
// extract.sh would write ~185k tiny files (645 MB of blocks, 20 s to minutes on this
// box); streaming the same tarballs with archive/tar keeps the suite quick and reads the
// very same bytes.
type dump struct {
	name  string // <dir>__<name>, as extract.sh names its output directories
	fsys  *memFS
	roots []string // fs paths holding sys/devices/system/cpu, sorted ("." for the top)
	top   []string // top-level entries
}

var (
	dumpsOnce sync.Once
	dumps     map[string]*dump
	dumpsErr  error
)

// loadDumps reads every tarball once per test binary, a few at a time.
func loadDumps(t testing.TB) map[string]*dump {
	t.Helper()
	shared := sharedDir(t)
	dumpsOnce.Do(func() {
		dumps = map[string]*dump{}
		topo := filepath.Join(shared, "topologies")
		type job struct{ path, name string }
		jobs := []job{{filepath.Join(shared, "traces/vm2-sysfs-topology.tar.gz"), "vm2-sysfs-topology"}}
		dumpsErr = filepath.WalkDir(topo, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".tar.bz2") || strings.HasSuffix(p, ".tar.gz")) {
				return err
			}
			rel, _ := filepath.Rel(topo, p)
			name := strings.ReplaceAll(rel, "/", "__")
			name = strings.TrimSuffix(strings.TrimSuffix(name, ".bz2"), ".gz")
			jobs = append(jobs, job{p, strings.TrimSuffix(name, ".tar")})
			return nil
		})
		if dumpsErr != nil {
			return
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.NumCPU())
		for _, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				dm, err := loadTarball(j.path, j.name)
				mu.Lock()
				defer mu.Unlock()
				dumps[j.name] = dm
				if err != nil && dumpsErr == nil {
					dumpsErr = err
				}
			}()
		}
		wg.Wait()
	})
	if dumpsErr != nil {
		t.Fatal(dumpsErr)
	}
	return dumps
}

var memoryBlockRe = regexp.MustCompile(`/memory[0-9]+(/|$)`)

func loadTarball(p, name string) (*dump, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var in io.Reader
	if strings.HasSuffix(p, ".bz2") {
		// The bzip2 program (which extract.sh's tar uses too) is several times faster
		// than compress/bzip2; fall back to the latter where it is missing.
		if bz, err := exec.LookPath("bzip2"); err == nil {
			cmd := exec.Command(bz, "-dc")
			cmd.Stdin = f
			out, err := cmd.Output()
			if err != nil {
				return nil, fmt.Errorf("bzip2 -dc %s: %v", p, err)
			}
			in = bytes.NewReader(out)
		} else {
			in = bzip2.NewReader(bufio.NewReaderSize(f, 1<<16))
		}
	} else {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		in = gz
	}
	files := fstest.MapFS{}
	dm := &dump{name: name}
	roots, top := map[string]bool{}, map[string]bool{}
	tr := tar.NewReader(in)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		key := strings.TrimSuffix(path.Clean(strings.TrimPrefix(h.Name, "./")), "/")
		if key == "." || key == "" {
			continue
		}
		top[strings.Split(key, "/")[0]] = true
		slashed := "/" + key
		// Only what a topology reader looks at: sysfs cpu/node, proc and etc files.
		// (Per-memory-block links under node/ are thousands of entries of no use.)
		if !(strings.Contains(slashed, "/sys/devices/system/cpu") || strings.Contains(slashed, "/sys/devices/system/node") ||
			strings.Contains(slashed, "/proc/") || strings.Contains(slashed, "/etc/")) || memoryBlockRe.MatchString(key) {
			continue
		}
		if i := strings.Index(slashed, "/sys/devices/system/cpu"); i >= 0 {
			root := "."
			if i > 0 {
				root = slashed[1:i]
			}
			roots[root] = true
		}
		switch h.Typeflag {
		case tar.TypeDir:
			files[key] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %v", p, h.Name, err)
			}
			files[key] = &fstest.MapFile{Data: b, Mode: 0o644}
		default:
			// Symlinks (cpuN/nodeM, subsystem...): only their names matter to the reader.
			files[key] = &fstest.MapFile{Mode: 0o644}
		}
	}
	dm.fsys = newMemFS(files)
	for r := range roots {
		dm.roots = append(dm.roots, r)
	}
	sort.Strings(dm.roots)
	for e := range top {
		dm.top = append(dm.top, e)
	}
	sort.Strings(dm.top)
	return dm, nil
}

// read runs ReadFS on one root of a dump, shown as extract.sh would lay it out.
func (dm *dump) read(root string) (*Result, error) {
	sub, err := fs.Sub(dm.fsys, root)
	if err != nil {
		return nil, err
	}
	return ReadFS(sub, filepath.Join(dm.name, root), "sys")
}

func loadDump(t *testing.T, name string) *dump {
	t.Helper()
	dm, ok := loadDumps(t)[name]
	if !ok {
		t.Fatalf("no dump %s", name)
	}
	return dm
}

// corruptedDump is the hwloc dump its .test file describes as "conflicting cpusets".
const corruptedDump = "hwloc__linux__40intel64-4n10c+pci-conflicts"

// groundTruth finds the expected-output file of an extracted dump directory name
// (<dir>__<name> as extract.sh names it).
func groundTruth(t *testing.T, shared, name string) *truth {
	t.Helper()
	topo := filepath.Join(shared, "topologies")
	var tr *truth
	var err error
	switch {
	case strings.HasPrefix(name, "util-linux-lscpu__"):
		tr, err = parseLscpuExpected(filepath.Join(topo, "util-linux-lscpu", "lscpu-"+strings.TrimPrefix(name, "util-linux-lscpu__")+".expected"))
	case strings.HasPrefix(name, "hwloc__"):
		parts := strings.Split(name, "__")
		dir := filepath.Join(topo, "hwloc", parts[1])
		desc, rerr := os.ReadFile(filepath.Join(dir, parts[2]+".test"))
		if rerr != nil {
			t.Fatal(rerr)
		}
		target := ""
		for _, line := range strings.Split(string(desc), "\n") {
			if v, ok := strings.CutPrefix(line, "target:"); ok {
				target = strings.TrimSpace(v)
			}
		}
		if target == "" {
			t.Fatalf("%s.test has no target", parts[2])
		}
		if strings.HasSuffix(target, ".xml") {
			tr, err = parseHwlocXML(filepath.Join(dir, target))
		} else {
			tr, err = parseHwlocConsole(filepath.Join(dir, target))
		}
	default:
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func restrict(cpus []int, keep map[int]bool) []int {
	out := []int{}
	for _, c := range cpus {
		if keep[c] {
			out = append(out, c)
		}
	}
	return out
}

func setOf(cpus []int) map[int]bool {
	m := map[int]bool{}
	for _, c := range cpus {
		m[c] = true
	}
	return m
}

// ourGroups returns our partition (llc or core) restricted to the given CPUs.
func ourGroups(topo *schema.Topology, keep map[int]bool, field func(schema.CPU) *int) ([][]int, []int) {
	by := map[int][]int{}
	var unknown []int
	for _, c := range topo.Cpus {
		if !keep[c.CPU] {
			continue
		}
		if p := field(c); p != nil {
			by[*p] = append(by[*p], c.CPU)
		} else {
			unknown = append(unknown, c.CPU)
		}
	}
	var out [][]int
	for _, g := range by {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out, unknown
}

func fmtGroups(gs [][]int) string {
	var s []string
	for _, g := range gs {
		s = append(s, "{"+FormatCPUList(g)+"}")
	}
	return strings.Join(s, " ")
}

func sameGroups(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// compareTruth checks our topology against a ground-truth file.
func compareTruth(t *testing.T, res *Result, tr *truth) {
	t.Helper()
	topo := &res.Topology
	byCPU := map[int]schema.CPU{}
	for _, c := range topo.Cpus {
		byCPU[c.CPU] = c
	}
	want := setOf(tr.cpus)
	for _, c := range tr.cpus {
		if _, ok := byCPU[c]; !ok {
			t.Fatalf("%s lists CPU %d, we have no such CPU", tr.source, c)
		}
	}
	llc := func(c schema.CPU) *int { return c.LLC }
	core := func(c schema.CPU) *int { return c.Core }

	// LLC groups.
	got, unknown := ourGroups(topo, want, llc)
	if len(unknown) > 0 && (tr.llcCovers || len(tr.llcs) > 0) {
		t.Errorf("CPUs %s have no LLC", FormatCPUList(unknown))
	}
	if tr.llcCovers {
		if !sameGroups(got, tr.llcs) {
			t.Errorf("LLC groups differ from %s:\n got  %s\n want %s", tr.source, fmtGroups(got), fmtGroups(tr.llcs))
		}
	} else {
		// Only the groups the file shows are known (cgroup-restricted XML, caches not on
		// every PU): each must be exactly one of our LLCs.
		ours := map[string]bool{}
		for _, l := range topo.Llcs {
			ours[FormatCPUList(l.Cpus)] = true
			ours[FormatCPUList(restrict(l.Cpus, onlineSet(topo)))] = true
		}
		for _, g := range tr.llcs {
			if !ours[FormatCPUList(g)] {
				t.Errorf("%s has LLC {%s}, we have %s", tr.source, FormatCPUList(g), fmtLLCs(topo))
			}
		}
	}
	if tr.llcFromPkgNode {
		for _, l := range topo.Llcs {
			if l.Level != nil || l.SizeKb != nil {
				t.Errorf("approximated LLC %d claims level/size", l.ID)
			}
		}
		if !hasWarning(res, "no cache information") {
			t.Errorf("no warning about the missing cache information: %q", res.Warnings)
		}
	}

	// Cores.
	if len(tr.cores) > 0 {
		gotCores, unknown := ourGroups(topo, want, core)
		if len(unknown) > 0 {
			t.Errorf("CPUs %s have no core", FormatCPUList(unknown))
		}
		wantCores := tr.cores
		if tr.llcCovers || len(tr.nodes) == 0 { // console/lscpu: cores restricted to listed CPUs
			wantCores = nil
			for _, g := range tr.cores {
				if r := restrict(g, want); len(r) > 0 {
					wantCores = append(wantCores, r)
				}
			}
			sort.Slice(wantCores, func(i, j int) bool { return wantCores[i][0] < wantCores[j][0] })
			if !sameGroups(gotCores, wantCores) {
				t.Errorf("cores differ from %s:\n got  %s\n want %s", tr.source, fmtGroups(gotCores), fmtGroups(wantCores))
			}
		} else {
			for _, g := range tr.cores {
				c := byCPU[g[0]]
				if c.Core == nil || !slices.Equal(c.SMTSiblings, g) {
					t.Errorf("%s has core {%s}, CPU %d has siblings %v", tr.source, FormatCPUList(g), g[0], c.SMTSiblings)
				}
			}
		}
	}

	// NUMA nodes.
	if tr.noNodeInfo {
		if len(topo.NumaNodes) != 1 || topo.NumaNodes[0].ID != 0 || !hasWarning(res, "no NUMA nodes") {
			t.Errorf("kernel without NUMA: want one synthesized node 0 and a warning, got %+v %q", topo.NumaNodes, res.Warnings)
		}
	}
	for c, n := range tr.nodeOf {
		if !want[c] {
			continue // XML complete sets name CPUs outside the cgroup
		}
		if got := byCPU[c].NumaNode; got == nil || *got != n {
			t.Errorf("CPU %d: numa_node %v, %s says %d", c, deref(got, -1), tr.source, n)
		}
	}
	for c := range want {
		if _, ok := tr.nodeOf[c]; !ok && !tr.noNodeInfo && len(tr.nodes) > 0 {
			if got := byCPU[c].NumaNode; got != nil {
				t.Errorf("CPU %d: numa_node %d, %s puts it in no node", c, *got, tr.source)
			}
		}
	}
	nodeByID := map[int]schema.NumaNode{}
	for _, n := range topo.NumaNodes {
		nodeByID[n.ID] = n
	}
	online := onlineSet(topo)
	for id, cpus := range tr.nodes {
		n, ok := nodeByID[id]
		if !ok {
			t.Errorf("%s has NUMA node %d, we do not", tr.source, id)
			continue
		}
		if g, w := restrict(n.Cpus, online), restrict(cpus, online); !slices.Equal(g, w) {
			t.Errorf("node %d: online CPUs %s, %s says %s", id, FormatCPUList(g), tr.source, FormatCPUList(w))
		}
	}
	// Distances.
	pos := map[int]int{}
	for i, n := range topo.NumaNodes {
		pos[n.ID] = i
	}
	for k, v := range tr.distances {
		i, ok1 := pos[k[0]]
		j, ok2 := pos[k[1]]
		if !ok1 || !ok2 {
			t.Errorf("%s has a distance for nodes %v we do not have", tr.source, k)
			continue
		}
		if got := topo.NodeDistances[i][j]; got != v {
			t.Errorf("distance node %d -> node %d = %d, %s says %d", k[0], k[1], got, tr.source, v)
		}
	}
}

func onlineSet(topo *schema.Topology) map[int]bool {
	m := map[int]bool{}
	for _, c := range topo.Cpus {
		if c.Online {
			m[c.CPU] = true
		}
	}
	return m
}

func fmtLLCs(topo *schema.Topology) string {
	var gs [][]int
	for _, l := range topo.Llcs {
		gs = append(gs, l.Cpus)
	}
	return fmtGroups(gs)
}

func hasWarning(res *Result, sub string) bool {
	for _, w := range res.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// checkInvariants holds for every topology Read returns, whatever the machine.
func checkInvariants(t *testing.T, res *Result) {
	t.Helper()
	topo := &res.Topology
	if topo.Source != schema.TopologySourceSysfs || topo.Machine == "" {
		t.Errorf("source %q machine %q", topo.Source, topo.Machine)
	}
	if len(topo.Cpus) == 0 {
		t.Fatal("no CPUs")
	}
	nodes := map[int]schema.NumaNode{}
	for _, n := range topo.NumaNodes {
		nodes[n.ID] = n
	}
	if len(topo.NodeDistances) != len(topo.NumaNodes) {
		t.Errorf("%d distance rows for %d nodes", len(topo.NodeDistances), len(topo.NumaNodes))
	}
	for i, row := range topo.NodeDistances {
		if len(row) != len(topo.NumaNodes) {
			t.Errorf("distance row %d has %d entries", i, len(row))
		} else if row[i] != 10 {
			t.Errorf("distance of node %d to itself is %d", topo.NumaNodes[i].ID, row[i])
		}
	}
	for i := 1; i < len(topo.NumaNodes); i++ {
		if topo.NumaNodes[i].ID <= topo.NumaNodes[i-1].ID {
			t.Errorf("numa_nodes not ascending")
		}
	}
	coreMembers := map[int][]int{}
	for i, c := range topo.Cpus {
		if i > 0 && c.CPU <= topo.Cpus[i-1].CPU {
			t.Errorf("cpus not ascending at %d", c.CPU)
		}
		if !slices.Contains(c.SMTSiblings, c.CPU) || !slices.IsSorted(c.SMTSiblings) {
			t.Errorf("CPU %d: smt_siblings %v", c.CPU, c.SMTSiblings)
		}
		if c.Online && (c.Core == nil || c.LLC == nil) {
			t.Errorf("online CPU %d lacks core or llc", c.CPU)
		}
		if c.LLC != nil {
			if *c.LLC >= len(topo.Llcs) || !slices.Contains(topo.Llcs[*c.LLC].Cpus, c.CPU) {
				t.Errorf("CPU %d: llc %d does not list it", c.CPU, *c.LLC)
			}
		}
		if c.NumaNode != nil {
			if n, ok := nodes[*c.NumaNode]; !ok || !slices.Contains(n.Cpus, c.CPU) {
				t.Errorf("CPU %d: numa_node %d does not list it", c.CPU, *c.NumaNode)
			}
			if c.LLC != nil && !slices.Contains(topo.Llcs[*c.LLC].NumaNodes, *c.NumaNode) {
				t.Errorf("CPU %d: llc %d does not name node %d", c.CPU, *c.LLC, *c.NumaNode)
			}
		}
		if c.Core != nil {
			coreMembers[*c.Core] = append(coreMembers[*c.Core], c.CPU)
		}
	}
	for k := 0; k < len(coreMembers); k++ {
		if _, ok := coreMembers[k]; !ok {
			t.Errorf("core indexes not dense: %d missing", k)
		}
	}
	prevFirst := -1
	for i, l := range topo.Llcs {
		if l.ID != i || len(l.Cpus) == 0 || l.Cpus[0] <= prevFirst || !slices.IsSorted(l.Cpus) {
			t.Errorf("llc %d: id %d cpus %v not dense/ordered", i, l.ID, l.Cpus)
		}
		prevFirst = l.Cpus[0]
	}
}

// TestDumps reads every sysfs dump in ../shared/topologies and compares it with the
// dump's own expected output (lscpu tables, hwloc console or XML).
func TestDumps(t *testing.T) {
	shared := sharedDir(t)
	all := loadDumps(t)
	var names []string
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, name := range names {
		dm := all[name]
		if name == "vm2-sysfs-topology" {
			continue
		}
		if strings.HasPrefix(name, "hwloc__x86__") {
			// CPUID register dumps: no sysfs at all, Read must say so.
			t.Run(name, func(t *testing.T) {
				if len(dm.roots) != 0 || len(dm.top) != 1 {
					t.Fatalf("expected one CPUID dump directory and no sysfs, found roots %v top %v", dm.roots, dm.top)
				}
				if _, err := dm.read(dm.top[0]); !errors.Is(err, ErrNoSysfs) {
					t.Fatalf("want ErrNoSysfs, got %v", err)
				}
			})
			continue
		}
		if len(dm.roots) == 0 {
			t.Errorf("%s: no sysfs root found", name)
			continue
		}
		for _, root := range dm.roots {
			label := name
			if len(dm.roots) > 1 {
				label += "/" + path.Base(root)
			}
			t.Run(label, func(t *testing.T) {
				res, err := dm.read(root)
				if name == corruptedDump {
					var fe *FileError
					if !errors.As(err, &fe) || !errors.Is(err, ErrInconsistent) {
						t.Fatalf("want a FileError wrapping ErrInconsistent, got %v", err)
					}
					// The hwloc test says the 3rd L3 and the 4th socket conflict: the bad
					// files are cpu2's L3 mask and cpu3's package mask.
					if !strings.HasSuffix(fe.Path, "cpu2/cache/index3/shared_cpu_map") && !strings.HasSuffix(fe.Path, "cpu3/topology/core_siblings") {
						t.Errorf("error names %s", fe.Path)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				checkInvariants(t, res)
				if tr := groundTruth(t, shared, name); tr != nil {
					compareTruth(t, res, tr)
				} else {
					checkCRI(t, path.Base(root), res)
				}
				checked++
			})
		}
	}
	if checked < 20 {
		t.Errorf("only %d dumps checked", checked)
	}
}

// TestCorruptedDumpIsTheConflictOne: the negative test is the dump whose hwloc .test
// says its cpusets conflict.
func TestCorruptedDumpIsTheConflictOne(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(sharedDir(t), "topologies/hwloc/linux", strings.TrimPrefix(corruptedDump, "hwloc__linux__")+".test"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "conflicting cpusets") {
		t.Fatalf(".test of %s does not describe conflicting cpusets:\n%s", corruptedDump, b)
	}
}

// checkCRI: the cri-resource-manager dumps ship no expected output; PROVENANCE-external.md
// B.2 describes them, and these are the facts it states.
func checkCRI(t *testing.T, root string, res *Result) {
	t.Helper()
	topo := &res.Topology
	type facts struct {
		cpus, llcs int
		nodes      []int
		cpuless    []int
		snc        bool
	}
	want, ok := map[string]facts{
		"2-socket-4-node-40-core": {cpus: 80, llcs: 2, nodes: []int{0, 1, 2, 3}, snc: true},
		"4-socket-server-nosnc":   {cpus: 144, llcs: 4, nodes: []int{0, 1, 2, 3}},
		"server":                  {cpus: 112, llcs: 2, nodes: []int{0, 1, 2, 3, 4, 5}, cpuless: []int{4, 5}, snc: true},
		"desktop":                 {cpus: 20, llcs: 1, nodes: []int{0}},
	}[root]
	if !ok {
		t.Fatalf("no ground truth for %s", root)
	}
	if len(topo.Cpus) != want.cpus || len(topo.Llcs) != want.llcs {
		t.Errorf("%d CPUs %d LLCs, want %d %d", len(topo.Cpus), len(topo.Llcs), want.cpus, want.llcs)
	}
	var ids []int
	for _, n := range topo.NumaNodes {
		ids = append(ids, n.ID)
		if slices.Contains(want.cpuless, n.ID) != (len(n.Cpus) == 0) {
			t.Errorf("node %d has CPUs %v", n.ID, n.Cpus)
		}
	}
	if !slices.Equal(ids, want.nodes) {
		t.Errorf("nodes %v, want %v", ids, want.nodes)
	}
	for _, l := range topo.Llcs {
		// SNC: an L3 spans a whole socket while NUMA splits it in two.
		if want.snc && len(l.NumaNodes) != 2 || !want.snc && len(l.NumaNodes) != 1 {
			t.Errorf("llc %d spans nodes %v (snc=%v)", l.ID, l.NumaNodes, want.snc)
		}
	}
}

func TestVMDump(t *testing.T) {
	res, err := loadDump(t, "vm2-sysfs-topology").read(".")
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	topo := res.Topology
	// The dev VM (traces/README.md): 2 vCPUs, no SMT, one L3, one node.
	if len(topo.Cpus) != 2 || len(topo.Llcs) != 1 || len(topo.NumaNodes) != 1 {
		t.Fatalf("got %d CPUs %d LLCs %d nodes", len(topo.Cpus), len(topo.Llcs), len(topo.NumaNodes))
	}
	if topo.Machine != "vm2-sysfs-topology" {
		t.Errorf("machine %q", topo.Machine)
	}
	for _, c := range topo.Cpus {
		if !c.Online || *c.Core != c.CPU || *c.LLC != 0 || *c.NumaNode != 0 || len(c.SMTSiblings) != 1 {
			t.Errorf("CPU %+v", c)
		}
	}
	l := topo.Llcs[0]
	if !slices.Equal(l.Cpus, []int{0, 1}) || l.Level == nil || *l.Level != 3 || l.SizeKb == nil || *l.SizeKb <= 0 {
		t.Errorf("llc %+v", l)
	}
}

// TestOfflineCPUs: hwloc's offline-cpu0-node0 dump has CPUs 0-3 and 21-23 offline (no
// topology directory) and node 0 offline. They stay listed, with core unknown.
func TestOfflineCPUs(t *testing.T) {
	res, err := loadDump(t, "hwloc__linux__offline-cpu0-node0").read("offline-cpu0-node0")
	if err != nil {
		t.Fatal(err)
	}
	topo := res.Topology
	if len(topo.Cpus) != 24 {
		t.Fatalf("%d CPUs listed, want all 24 present", len(topo.Cpus))
	}
	for _, c := range topo.Cpus {
		offline := c.CPU <= 3 || c.CPU >= 21
		if c.Online == offline {
			t.Errorf("CPU %d online=%v", c.CPU, c.Online)
		}
		if offline && (c.Core != nil || c.Package != nil) {
			t.Errorf("offline CPU %d has core %v package %v", c.CPU, deref(c.Core, -1), deref(c.Package, -1))
		}
		if c.CPU%2 == 0 && c.NumaNode != nil {
			t.Errorf("CPU %d is on the offline node 0 but has numa_node %d", c.CPU, *c.NumaNode)
		}
	}
	if len(topo.NumaNodes) != 1 || topo.NumaNodes[0].ID != 1 || len(topo.NodeDistances) != 1 || !slices.Equal(topo.NodeDistances[0], []int{10}) {
		t.Errorf("nodes %+v distances %v", topo.NumaNodes, topo.NodeDistances)
	}
	if !hasWarning(res, "no NUMA node present") {
		t.Errorf("no warning for the CPUs of the offline node: %q", res.Warnings)
	}
}

// TestSparseNodes: node ids 0,1,2,33,34,45,72,73; the distance rows are in that order.
func TestSparseNodes(t *testing.T) {
	res, err := loadDump(t, "hwloc__linux__48amd64-4pa2n6c-sparse").read("48amd64-4d2n6c-sparse")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, n := range res.Topology.NumaNodes {
		ids = append(ids, n.ID)
	}
	if !slices.Equal(ids, []int{0, 1, 2, 33, 34, 45, 72, 73}) {
		t.Errorf("node ids %v", ids)
	}
}

func TestNoSysfs(t *testing.T) {
	_, err := Read(t.TempDir())
	if !errors.Is(err, ErrNoSysfs) {
		t.Fatalf("want ErrNoSysfs, got %v", err)
	}
}

// TestDamagedFiles: garbage in a file gives a FileError naming that file.
func TestDamagedFiles(t *testing.T) {
	vm := loadDump(t, "vm2-sysfs-topology")
	cases := []struct {
		file, content string
		kind          error
	}{
		{"sys/devices/system/cpu/cpu1/topology/thread_siblings_list", "1-x\n", ErrMalformed},
		{"sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list", "0\n", ErrInconsistent},
		{"sys/devices/system/cpu/cpu1/topology/physical_package_id", "zero\n", ErrMalformed},
		{"sys/devices/system/node/node0/distance", "10 20 30\n", ErrMalformed},
		{"sys/devices/system/cpu/cpu0/cache/index3/size", "lots\n", ErrMalformed},
		{"sys/devices/system/cpu/online", "0-1,\n", ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			damaged := fstest.MapFS{}
			for k, v := range vm.fsys.m {
				damaged[k] = v
			}
			if _, ok := damaged[tc.file]; !ok {
				t.Fatalf("the VM dump has no %s", tc.file)
			}
			damaged[tc.file] = &fstest.MapFile{Data: []byte(tc.content), Mode: 0o644}
			_, err := ReadFS(newMemFS(damaged), "vm", "sys")
			var fe *FileError
			if !errors.As(err, &fe) || !errors.Is(err, tc.kind) {
				t.Fatalf("want FileError(%v), got %v", tc.kind, err)
			}
			// A list contradicted by its map twin may be reported at the map, naming both.
			msg := err.Error()
			if !strings.Contains(msg, filepath.Dir(tc.file)) || !strings.Contains(msg, filepath.Base(tc.file)) {
				t.Errorf("error does not name %s: %v", tc.file, err)
			}
		})
	}
}

// TestLive reads this machine's /sys: whatever it is, the invariants hold.
func TestLive(t *testing.T) {
	if !isDir(os.DirFS("/"), "sys/devices/system/cpu") {
		t.Skip("no /sys/devices/system/cpu on this host")
	}
	res, err := Read("/")
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if len(res.Topology.Cpus) < runtime.NumCPU() {
		t.Errorf("%d CPUs in sysfs, runtime sees %d", len(res.Topology.Cpus), runtime.NumCPU())
	}
}
