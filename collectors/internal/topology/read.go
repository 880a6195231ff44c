// Package topology reads a Linux machine's CPU topology from sysfs
// (/sys/devices/system/cpu and /sys/devices/system/node, optionally under a root prefix
// such as an extracted sysfs dump) into the schema.Topology contract: every CPU with its
// core, LLC, NUMA node and package; the LLCs; the NUMA nodes and their distance matrix.
//
// It owns the interpretation of sysfs, including old kernels (hex masks without *_list
// twins, no online files), offline CPUs, CPU-less and sparse NUMA nodes, missing cache
// directories (approximated, with a warning) and contradictory files (a named error).
package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"placemap/collectors/internal/schema"
)

// Result is a topology plus the warnings that say where sysfs had to be filled in.
type Result struct {
	Topology schema.Topology
	Warnings []string
}

// Read reads the topology under root ("" or "/" for the running machine; otherwise a
// directory holding sys/devices/system/cpu, or a sysfs mount holding devices/system/cpu).
func Read(root string) (*Result, error) {
	if root == "" {
		root = "/"
	}
	root = filepath.Clean(root)
	if !isDir(os.DirFS(root), "sys/devices/system/cpu") && isDir(os.DirFS(root), "devices/system/cpu") && root != "/" {
		// --sysfs-root /sys: the root is the sysfs mount itself.
		parent := filepath.Dir(root)
		return ReadFS(os.DirFS(parent), parent, filepath.Base(root))
	}
	return ReadFS(os.DirFS(root), root, "sys")
}

// ReadFS reads the topology from fsys, whose sysDir ("sys" for a whole root file system)
// holds devices/system/{cpu,node}; proc/ and etc/ beside it give the host name and kernel
// release when present. display prefixes the paths named in errors and names the machine
// when nothing better is found ("/" means the running machine).
func ReadFS(fsys fs.FS, display, sysDir string) (*Result, error) {
	r := &reader{fsys: fsys, display: display}
	r.cpuDir = path.Join(sysDir, "devices/system/cpu")
	r.nodeDir = path.Join(sysDir, "devices/system/node")
	if !isDir(fsys, r.cpuDir) {
		return nil, fmt.Errorf("%w: no %s under %s", ErrNoSysfs, r.cpuDir, display)
	}
	if err := r.read(); err != nil {
		return nil, err
	}
	return &Result{Topology: r.topo, Warnings: r.warnings}, nil
}

type reader struct {
	fsys            fs.FS
	display         string // shown before fs paths in errors and warnings
	cpuDir, nodeDir string // fs paths

	topo     schema.Topology
	warnings []string

	ids      []int // CPUs with a cpuN directory, ascending
	universe map[int]bool
	online   map[int]bool
	cpus     map[int]*cpuInfo
	nodeOf   map[int]int // CPU -> NUMA node id
}

type cpuInfo struct {
	id       int
	online   bool
	hasTopo  bool
	pkg, die *int
	coreID   *int
	capacity *int
	nodeLink *int // from the cpuN/nodeM link

	siblings  []int // thread siblings as sysfs lists them
	sibPath   string
	pkgCPUs   []int // package siblings (only used for a consistency check)
	pkgPath   string
	llcSet    []int
	llcPath   string
	llcLevel  *int
	llcSizeKB *int
	llcID     *int
	llcType   string
}

func (r *reader) warnf(format string, a ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, a...))
}

var (
	cpuDirRe   = regexp.MustCompile(`^cpu([0-9]+)$`)
	nodeDirRe  = regexp.MustCompile(`^node([0-9]+)$`)
	indexDirRe = regexp.MustCompile(`^index([0-9]+)$`)
)

func (r *reader) read() error {
	entries, err := fs.ReadDir(r.fsys, r.cpuDir)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNoSysfs, r.disp(r.cpuDir), err)
	}
	r.universe = map[int]bool{}
	for _, e := range entries {
		if m := cpuDirRe.FindStringSubmatch(e.Name()); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil || n >= MaxCPU {
				return &FileError{Path: r.disp(path.Join(r.cpuDir, e.Name())), Err: ErrMalformed, Detail: "CPU number out of range"}
			}
			r.ids = append(r.ids, n)
			r.universe[n] = true
		}
	}
	sort.Ints(r.ids)
	if len(r.ids) == 0 {
		return fmt.Errorf("%w: no cpuN directories in %s", ErrNoSysfs, r.disp(r.cpuDir))
	}
	if err := r.readOnline(); err != nil {
		return err
	}
	r.cpus = map[int]*cpuInfo{}
	for _, id := range r.ids {
		c, err := r.readCPU(id)
		if err != nil {
			return err
		}
		r.cpus[id] = c
	}
	nodes, err := r.readNodes()
	if err != nil {
		return err
	}
	cores, err := r.cores()
	if err != nil {
		return err
	}
	if err := r.checkPackages(); err != nil {
		return err
	}
	llcs, llcOf, err := r.llcs()
	if err != nil {
		return err
	}

	t := &r.topo
	t.Source = schema.TopologySourceSysfs
	t.Machine = r.machineName()
	if rel := r.kernelRelease(); rel != "" {
		t.KernelRelease = &rel
	}
	t.NumaNodes = nodes
	t.Cpus = make([]schema.CPU, 0, len(r.ids))
	for _, id := range r.ids {
		c := r.cpus[id]
		out := schema.CPU{CPU: id, Online: c.online, Package: c.pkg, Die: c.die, CoreID: c.coreID, Capacity: c.capacity}
		out.SMTSiblings = []int{id}
		if k, ok := cores.of[id]; ok {
			out.Core = ptr(k)
			out.SMTSiblings = cores.groups[k]
		}
		if l, ok := llcOf[id]; ok {
			out.LLC = ptr(l)
		}
		if n, ok := r.nodeOf[id]; ok {
			out.NumaNode = ptr(n)
		}
		t.Cpus = append(t.Cpus, out)
	}
	t.Llcs = llcs
	t.Notes = notes(t, r.warnings)
	return nil
}

// readOnline decides which CPUs are online: cpuN/online where present, else the
// cpu/online list, else online (cpu0 is often not hotpluggable and has no online file;
// very old kernels have neither).
func (r *reader) readOnline() error {
	global, globalPath, hasGlobal, err := r.readListFile(path.Join(r.cpuDir, "online"))
	if err != nil {
		return err
	}
	inGlobal := map[int]bool{}
	for _, c := range global {
		inGlobal[c] = true
	}
	r.online = map[int]bool{}
	var disagree []int
	for _, id := range r.ids {
		p := path.Join(r.cpuDir, fmt.Sprintf("cpu%d", id), "online")
		s, ok, err := r.readTrim(p)
		if err != nil {
			return err
		}
		switch {
		case ok:
			switch s {
			case "1":
				r.online[id] = true
			case "0":
			default:
				return &FileError{Path: r.disp(p), Err: ErrMalformed, Detail: fmt.Sprintf("want 0 or 1, got %q", s)}
			}
			if hasGlobal && r.online[id] != inGlobal[id] {
				disagree = append(disagree, id)
			}
		case hasGlobal:
			r.online[id] = inGlobal[id]
		default:
			r.online[id] = true
		}
	}
	if len(disagree) > 0 {
		r.warnf("%s disagrees with cpuN/online for CPUs %s; used cpuN/online", r.disp(globalPath), FormatCPUList(disagree))
	}
	return nil
}

func (r *reader) readCPU(id int) (*cpuInfo, error) {
	c := &cpuInfo{id: id, online: r.online[id]}
	dir := path.Join(r.cpuDir, fmt.Sprintf("cpu%d", id))
	topo := path.Join(dir, "topology")
	var err error
	if isDir(r.fsys, topo) {
		c.hasTopo = true
		if c.pkg, err = r.readIntFile(path.Join(topo, "physical_package_id"), true); err != nil {
			return nil, err
		}
		if c.die, err = r.readIntFile(path.Join(topo, "die_id"), true); err != nil {
			return nil, err
		}
		if c.coreID, err = r.readIntFile(path.Join(topo, "core_id"), true); err != nil {
			return nil, err
		}
		var ok bool
		if c.siblings, c.sibPath, ok, err = r.readSet(topo, "thread_siblings_list", "thread_siblings"); err != nil {
			return nil, err
		} else if !ok {
			if c.siblings, c.sibPath, _, err = r.readSet(topo, "core_cpus_list", "core_cpus"); err != nil {
				return nil, err
			}
		}
		if c.pkgCPUs, c.pkgPath, ok, err = r.readSet(topo, "core_siblings_list", "core_siblings"); err != nil {
			return nil, err
		} else if !ok {
			if c.pkgCPUs, c.pkgPath, _, err = r.readSet(topo, "package_cpus_list", "package_cpus"); err != nil {
				return nil, err
			}
		}
	}
	if c.capacity, err = r.readIntFile(path.Join(dir, "cpu_capacity"), false); err != nil {
		return nil, err
	}
	if entries, err := fs.ReadDir(r.fsys, dir); err == nil {
		for _, e := range entries {
			if m := nodeDirRe.FindStringSubmatch(e.Name()); m != nil {
				n, _ := strconv.Atoi(m[1])
				c.nodeLink = &n
			}
		}
	}
	if err := r.readCache(c, path.Join(dir, "cache")); err != nil {
		return nil, err
	}
	return c, nil
}

// readCache picks the CPU's last-level cache: the highest-level Unified or Data cache
// (instruction caches never hold the data tasks share; s390 splits L2 into L2d/L2i).
func (r *reader) readCache(c *cpuInfo, cacheDir string) error {
	entries, err := fs.ReadDir(r.fsys, cacheDir)
	if err != nil {
		return nil // no cache directory: handled by the caller's fallback
	}
	best, bestLevel, bestType := "", -1, ""
	for _, e := range entries {
		if !indexDirRe.MatchString(e.Name()) {
			continue
		}
		idx := path.Join(cacheDir, e.Name())
		typ, ok, err := r.readTrim(path.Join(idx, "type"))
		if err != nil {
			return err
		}
		if !ok || (typ != "Unified" && typ != "Data") {
			continue
		}
		lvl, err := r.readIntFile(path.Join(idx, "level"), false)
		if err != nil {
			return err
		}
		if lvl == nil {
			continue
		}
		if *lvl > bestLevel || (*lvl == bestLevel && typ == "Unified" && bestType != "Unified") {
			best, bestLevel, bestType = idx, *lvl, typ
		}
	}
	if best == "" {
		return nil
	}
	set, setPath, ok, err := r.readSet(best, "shared_cpu_list", "shared_cpu_map")
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	c.llcSet, c.llcPath, c.llcLevel, c.llcType = set, setPath, ptr(bestLevel), bestType
	if c.llcID, err = r.readIntFile(path.Join(best, "id"), false); err != nil {
		return err
	}
	sizePath := path.Join(best, "size")
	if s, ok, err := r.readTrim(sizePath); err != nil {
		return err
	} else if ok && s != "" {
		kb, err := parseSizeKB(s)
		if err != nil {
			return &FileError{Path: r.disp(sizePath), Err: ErrMalformed, Detail: err.Error()}
		}
		c.llcSizeKB = &kb
	}
	return nil
}

func parseSizeKB(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		s, mult = s[:len(s)-1], 1024
	case strings.HasSuffix(s, "G"):
		s, mult = s[:len(s)-1], 1024*1024
	default:
		return 0, fmt.Errorf("want a size like 32768K, got %q", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1<<40/mult {
		return 0, fmt.Errorf("want a size like 32768K, got %q", s+"K")
	}
	return n * mult, nil
}

// readSet reads a CPU set from dir/listName, or from the hex dir/mapName when the list is
// missing (old kernels). When both exist they must agree on the online CPUs: hotplug
// updates of the masks legitimately drop offline CPUs, anything else is a contradiction.
func (r *reader) readSet(dir, listName, mapName string) ([]int, string, bool, error) {
	listPath, mapPath := path.Join(dir, listName), path.Join(dir, mapName)
	list, _, hasList, err := r.readListFile(listPath)
	if err != nil {
		return nil, "", false, err
	}
	ms, hasMap, err := r.readTrim(mapPath)
	if err != nil {
		return nil, "", false, err
	}
	var mask []int
	if hasMap {
		if mask, err = ParseCPUMask(ms); err != nil {
			return nil, "", false, &FileError{Path: r.disp(mapPath), Err: ErrMalformed, Detail: err.Error()}
		}
	}
	switch {
	case hasList && hasMap:
		a, b := r.onlineOnly(list), r.onlineOnly(mask)
		if !slices.Equal(a, b) {
			return nil, "", false, &FileError{Path: r.disp(mapPath), Err: ErrInconsistent,
				Detail: fmt.Sprintf("says online CPUs %s but %s beside it says %s", FormatCPUList(b), listName, FormatCPUList(a))}
		}
		return list, listPath, true, nil
	case hasList:
		return list, listPath, true, nil
	case hasMap:
		return mask, mapPath, true, nil
	}
	return nil, "", false, nil
}

func (r *reader) onlineOnly(cpus []int) []int {
	out := []int{}
	for _, c := range cpus {
		if r.online[c] {
			out = append(out, c)
		}
	}
	return out
}

func (r *reader) readListFile(p string) ([]int, string, bool, error) {
	s, ok, err := r.readTrim(p)
	if err != nil || !ok {
		return nil, p, false, err
	}
	l, err := ParseCPUList(s)
	if err != nil {
		return nil, p, false, &FileError{Path: r.disp(p), Err: ErrMalformed, Detail: err.Error()}
	}
	return l, p, true, nil
}

// partition groups CPUs by the sets they report (thread siblings, LLC sharers...).
// The key of a CPU is its set restricted to online CPUs (plus itself when online), so
// masks that hotplug trimmed still group with untrimmed lists; two keys that overlap
// without being equal mean the files contradict each other.
type partition struct {
	groups [][]int     // members (union of what sysfs lists, within the CPU universe), ascending; ordered by first CPU
	of     map[int]int // CPU -> group index
}

type setInput struct {
	cpu  int
	set  []int
	path string
}

func (r *reader) partition(inputs []setInput, what string) (*partition, error) {
	type group struct {
		members map[int]bool
		key     string
	}
	byKey := map[string]*group{}
	keyOfOnline := map[int]string{} // online CPU -> key that claims it
	pathOfKey := map[string]string{}
	var order []string
	for _, in := range inputs {
		var key []int
		if r.online[in.cpu] {
			key = r.onlineOnly(append(slices.Clone(in.set), in.cpu))
		} else {
			key = r.onlineOnly(in.set)
		}
		if len(key) == 0 {
			key = append(slices.Clone(in.set), in.cpu)
		}
		slices.Sort(key)
		key = slices.Compact(key)
		k := FormatCPUList(key)
		g, ok := byKey[k]
		if !ok {
			g = &group{members: map[int]bool{}, key: k}
			byKey[k] = g
			pathOfKey[k] = in.path
			order = append(order, k)
		}
		for _, c := range append(slices.Clone(in.set), in.cpu) {
			if r.universe[c] {
				g.members[c] = true
			}
		}
		for _, c := range key {
			if !r.online[c] {
				continue
			}
			if prev, ok := keyOfOnline[c]; ok && prev != k {
				return nil, &FileError{Path: r.disp(in.path), Err: ErrInconsistent,
					Detail: fmt.Sprintf("%s of CPU %d is %s, but %s puts CPU %d with %s", what, in.cpu, FormatCPUList(in.set), r.disp(pathOfKey[prev]), c, prev)}
			}
			keyOfOnline[c] = k
		}
	}
	p := &partition{of: map[int]int{}}
	for _, k := range order {
		p.groups = append(p.groups, sortedKeys(byKey[k].members))
	}
	sort.Slice(p.groups, func(i, j int) bool { return p.groups[i][0] < p.groups[j][0] })
	for i, g := range p.groups {
		for _, c := range g {
			if prev, ok := p.of[c]; ok && prev != i {
				// Only offline CPUs can get here (online ones were checked above).
				return nil, &FileError{Path: r.disp(inputs[0].path), Err: ErrInconsistent,
					Detail: fmt.Sprintf("offline CPU %d is listed in two %s sets: %s and %s", c, what, FormatCPUList(p.groups[prev]), FormatCPUList(g))}
			}
			p.of[c] = i
		}
	}
	return p, nil
}

// cores numbers cores densely across the machine. Two CPUs share a core when the kernel
// lists them as thread siblings AND they have the same (package, die, core_id): on
// normal machines the two relations agree, but AMD Bulldozer kernels list both integer
// cores of a compute module as thread siblings while giving them distinct core_ids
// (hwloc and lscpu count them as two cores, and so do we, with a warning). CPUs with no
// sibling file fall back to (package, die, core_id) alone; offline CPUs without a
// topology directory get no core.
func (r *reader) cores() (*partition, error) {
	type idKey [3]int
	keyOf := func(c *cpuInfo) idKey { return idKey{deref(c.pkg, -1), deref(c.die, -1), *c.coreID} }
	byID := map[idKey][]int{}
	for _, id := range r.ids {
		if c := r.cpus[id]; c.coreID != nil {
			byID[keyOf(c)] = append(byID[keyOf(c)], id)
		}
	}
	var inputs []setInput
	for _, id := range r.ids {
		c := r.cpus[id]
		switch {
		case c.sibPath != "":
			inputs = append(inputs, setInput{cpu: id, set: c.siblings, path: c.sibPath})
		case c.coreID != nil:
			inputs = append(inputs, setInput{cpu: id, set: byID[keyOf(c)], path: path.Join(r.cpuDir, fmt.Sprintf("cpu%d/topology/core_id", id))})
		case c.online:
			r.warnf("CPU %d is online but has no topology directory: core unknown", id)
		}
	}
	sib, err := r.partition(inputs, "thread siblings")
	if err != nil {
		return nil, err
	}
	type refined struct {
		group int
		id    idKey
	}
	members := map[refined][]int{}
	var split []int
	for _, id := range r.ids {
		g, ok := sib.of[id]
		c := r.cpus[id]
		if !ok || (!c.hasTopo && c.coreID == nil) {
			continue
		}
		k := refined{group: g, id: idKey{-1, -1, -1}}
		if c.coreID != nil {
			k.id = keyOf(c)
		}
		members[k] = append(members[k], id)
	}
	groups := make([][]int, 0, len(members))
	perSib := map[int]int{}
	for k, m := range members {
		groups = append(groups, m)
		perSib[k.group]++
	}
	for g, n := range perSib {
		if n > 1 {
			split = append(split, sib.groups[g]...)
		}
	}
	if len(split) > 0 {
		sort.Ints(split)
		r.warnf("thread siblings %s have distinct core_ids (compute-unit style SMT, e.g. AMD Bulldozer): counted as separate cores", FormatCPUList(split))
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i][0] < groups[j][0] })
	p := &partition{groups: groups, of: map[int]int{}}
	for i, g := range groups {
		for _, c := range g {
			p.of[c] = i
		}
	}
	return p, nil
}

// checkPackages only validates the package sibling sets (the corrupted hwloc dump has a
// package mask that claims CPUs of other packages).
func (r *reader) checkPackages() error {
	var inputs []setInput
	for _, id := range r.ids {
		if c := r.cpus[id]; c.pkgPath != "" {
			inputs = append(inputs, setInput{cpu: id, set: c.pkgCPUs, path: c.pkgPath})
		}
	}
	_, err := r.partition(inputs, "package siblings")
	return err
}

func (r *reader) llcs() ([]schema.LLC, map[int]int, error) {
	var inputs []setInput
	for _, id := range r.ids {
		if c := r.cpus[id]; c.llcPath != "" {
			inputs = append(inputs, setInput{cpu: id, set: c.llcSet, path: c.llcPath})
		}
	}
	if len(inputs) == 0 {
		return r.fallbackLLCs()
	}
	p, err := r.partition(inputs, "LLC sharers")
	if err != nil {
		return nil, nil, err
	}
	var missing []int
	for _, id := range r.ids {
		if _, ok := p.of[id]; !ok && r.online[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		r.warnf("online CPUs %s have no cache information and no other CPU lists them: llc unknown", FormatCPUList(missing))
	}
	out := make([]schema.LLC, len(p.groups))
	levels := map[int]bool{}
	for i, g := range p.groups {
		l := schema.LLC{ID: i, Cpus: g}
		// Attributes come from the first member that reported the cache itself.
		for _, c := range g {
			ci := r.cpus[c]
			if ci.llcPath != "" {
				l.Level, l.SizeKb, l.SysfsID = ci.llcLevel, ci.llcSizeKB, ci.llcID
				levels[*ci.llcLevel] = true
				break
			}
		}
		l.Package = r.commonPackage(g)
		l.NumaNodes = r.nodesOf(g)
		out[i] = l
	}
	if levels[1] {
		r.warnf("sysfs lists only level-1 caches for some CPUs: their LLC is the L1 data cache")
	}
	return out, p.of, nil
}

// fallbackLLCs is used when no CPU has cache information (e.g. the RISC-V Milk-V
// Pioneer dump): one LLC per (package, NUMA node), the span the kernel's own
// cpu_coregroup_mask gives the scheduler's MC domain when it knows of no shared cache.
func (r *reader) fallbackLLCs() ([]schema.LLC, map[int]int, error) {
	r.warnf("no cache information under %s/cpu*/cache: LLCs approximated as one per (package, NUMA node), like the kernel's MC domain; level and size unknown", r.disp(r.cpuDir))
	type key struct{ pkg, node int }
	groups := map[key][]int{}
	var keys []key
	for _, id := range r.ids {
		c := r.cpus[id]
		if !c.hasTopo && !c.online {
			continue
		}
		n, ok := r.nodeOf[id]
		if !ok {
			n = -1
		}
		k := key{deref(c.pkg, -1), n}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], id)
	}
	sort.Slice(keys, func(i, j int) bool { return groups[keys[i]][0] < groups[keys[j]][0] })
	out := make([]schema.LLC, len(keys))
	of := map[int]int{}
	for i, k := range keys {
		g := groups[k]
		out[i] = schema.LLC{ID: i, Cpus: g, Package: r.commonPackage(g), NumaNodes: r.nodesOf(g)}
		for _, c := range g {
			of[c] = i
		}
	}
	return out, of, nil
}

func (r *reader) commonPackage(cpus []int) *int {
	var pkg *int
	for _, c := range cpus {
		p := r.cpus[c].pkg
		if p == nil {
			continue
		}
		if pkg != nil && *pkg != *p {
			return nil
		}
		pkg = p
	}
	return pkg
}

func (r *reader) nodesOf(cpus []int) []int {
	set := map[int]bool{}
	for _, c := range cpus {
		if n, ok := r.nodeOf[c]; ok {
			set[n] = true
		}
	}
	return sortedKeys(set)
}

// readNodes reads node/nodeN (cpulist or cpumap, meminfo, distance). A kernel without
// NUMA has no node directory: that machine is one memory domain, reported as node 0.
func (r *reader) readNodes() ([]schema.NumaNode, error) {
	r.nodeOf = map[int]int{}
	var ids []int
	if entries, err := fs.ReadDir(r.fsys, r.nodeDir); err == nil {
		for _, e := range entries {
			if m := nodeDirRe.FindStringSubmatch(e.Name()); m != nil && isDir(r.fsys, path.Join(r.nodeDir, e.Name())) {
				n, err := strconv.Atoi(m[1])
				if err != nil || n >= MaxCPU {
					return nil, &FileError{Path: r.disp(path.Join(r.nodeDir, e.Name())), Err: ErrMalformed, Detail: "node number out of range"}
				}
				ids = append(ids, n)
			}
		}
	}
	sort.Ints(ids)
	if len(ids) == 0 {
		r.warnf("no NUMA nodes under %s: reporting one node 0 holding every CPU", r.disp(r.nodeDir))
		n := schema.NumaNode{ID: 0, Cpus: slices.Clone(r.ids)}
		for _, c := range r.ids {
			r.nodeOf[c] = 0
		}
		if kb, ok := r.meminfoTotal("proc/meminfo", "MemTotal:"); ok {
			n.MemoryKb = &kb
		}
		r.topo.NodeDistances = [][]int{{10}}
		return []schema.NumaNode{n}, nil
	}
	nodes := make([]schema.NumaNode, len(ids))
	pathOf := map[int]string{}
	var dropped []int
	for i, id := range ids {
		dir := path.Join(r.nodeDir, fmt.Sprintf("node%d", id))
		set, listPath, ok, err := r.readSet(dir, "cpulist", "cpumap")
		if err != nil {
			return nil, err
		}
		if !ok {
			r.warnf("%s has neither cpulist nor cpumap: treated as CPU-less", r.disp(dir))
		}
		n := schema.NumaNode{ID: id, Cpus: []int{}}
		for _, c := range set {
			if !r.universe[c] {
				// s390 and others list possible-but-absent CPUs in the node mask.
				dropped = append(dropped, c)
				continue
			}
			if prev, ok := r.nodeOf[c]; ok {
				return nil, &FileError{Path: r.disp(listPath), Err: ErrInconsistent,
					Detail: fmt.Sprintf("lists CPU %d, which %s puts in node %d", c, r.disp(pathOf[prev]), prev)}
			}
			r.nodeOf[c] = id
			n.Cpus = append(n.Cpus, c)
		}
		pathOf[id] = listPath
		if kb, ok := r.meminfoTotal(path.Join(dir, "meminfo"), fmt.Sprintf("Node %d MemTotal:", id)); ok {
			n.MemoryKb = &kb
		}
		nodes[i] = n
	}
	if len(dropped) > 0 {
		slices.Sort(dropped)
		r.warnf("node masks list CPUs %s that have no cpuN directory: ignored", FormatCPUList(slices.Compact(dropped)))
	}
	// A CPU no node lists but whose cpuN/nodeM link names an existing node joins it;
	// one whose node is absent (offlined) keeps numa_node null.
	index := map[int]int{}
	for i, id := range ids {
		index[id] = i
	}
	var orphans []int
	for _, c := range r.ids {
		if _, ok := r.nodeOf[c]; ok {
			continue
		}
		if l := r.cpus[c].nodeLink; l != nil {
			if i, ok := index[*l]; ok {
				r.nodeOf[c] = *l
				nodes[i].Cpus = append(nodes[i].Cpus, c)
				sort.Ints(nodes[i].Cpus)
				continue
			}
		}
		orphans = append(orphans, c)
	}
	if len(orphans) > 0 {
		r.warnf("CPUs %s belong to no NUMA node present in %s: numa_node null", FormatCPUList(orphans), r.disp(r.nodeDir))
	}
	d, err := r.distances(ids)
	if err != nil {
		return nil, err
	}
	r.topo.NodeDistances = d
	return nodes, nil
}

// distances builds the matrix in the order of ids. A distance row has one entry per node
// the kernel counted when printing it: the online nodes normally, the possible ones on
// dumps edited after the fact; pick the id list whose length matches.
func (r *reader) distances(ids []int) ([][]int, error) {
	var candidates [][]int
	for _, f := range []string{"online", "possible"} {
		if l, _, ok, err := r.readListFile(path.Join(r.nodeDir, f)); err != nil {
			return nil, err
		} else if ok {
			candidates = append(candidates, l)
		}
	}
	candidates = append(candidates, ids)
	out := make([][]int, len(ids))
	var defaulted []int
	for i, id := range ids {
		p := path.Join(r.nodeDir, fmt.Sprintf("node%d", id), "distance")
		s, ok, err := r.readTrim(p)
		if err != nil {
			return nil, err
		}
		row := make([]int, len(ids))
		if !ok {
			// No SLIT: the kernel itself then uses LOCAL_DISTANCE/REMOTE_DISTANCE.
			for j := range ids {
				row[j] = 20
			}
			row[i] = 10
			out[i] = row
			defaulted = append(defaulted, id)
			continue
		}
		fields := strings.Fields(s)
		vals := make([]int, len(fields))
		for k, f := range fields {
			v, err := strconv.Atoi(f)
			if err != nil || v < 0 {
				return nil, &FileError{Path: r.disp(p), Err: ErrMalformed, Detail: fmt.Sprintf("bad distance %q", f)}
			}
			vals[k] = v
		}
		var order []int
		for _, cand := range candidates {
			if len(cand) == len(vals) && slices.Contains(cand, id) {
				order = cand
				break
			}
		}
		if order == nil {
			return nil, &FileError{Path: r.disp(p), Err: ErrMalformed,
				Detail: fmt.Sprintf("has %d entries but there are %d nodes (%v)", len(vals), len(ids), ids)}
		}
		byNode := map[int]int{}
		for k, n := range order {
			byNode[n] = vals[k]
		}
		for j, other := range ids {
			v, ok := byNode[other]
			if !ok {
				return nil, &FileError{Path: r.disp(p), Err: ErrMalformed, Detail: fmt.Sprintf("no entry for node %d", other)}
			}
			row[j] = v
		}
		out[i] = row
	}
	if len(defaulted) > 0 && len(ids) > 1 {
		r.warnf("no distance file for nodes %s: used the kernel defaults 10 (local) / 20 (remote)", FormatCPUList(defaulted))
	}
	return out, nil
}

// machineName: the hostname the dump recorded, else the dump directory's name, else (live)
// this host's name.
func (r *reader) machineName() string {
	if r.display == "/" {
		if h, err := os.Hostname(); err == nil && h != "" {
			return h
		}
	}
	for _, p := range []string{"proc/sys/kernel/hostname", "etc/hostname"} {
		if s, ok, _ := r.readTrim(p); ok && s != "" {
			return s
		}
	}
	if v := r.hwlocInfo("proc/hwloc-nofile-info", "HostName"); v != "" {
		return v
	}
	if r.display != "/" && r.display != "" {
		return filepath.Base(filepath.Clean(r.display))
	}
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return "unknown"
}

func (r *reader) kernelRelease() string {
	if s, ok, _ := r.readTrim("proc/sys/kernel/osrelease"); ok && s != "" {
		return s
	}
	if v := r.hwlocInfo("proc/hwloc-nofile-info", "OSRelease"); v != "" {
		return v
	}
	if s, ok, _ := r.readTrim("proc/version"); ok {
		if f := strings.Fields(s); len(f) >= 3 && f[0] == "Linux" && f[1] == "version" {
			return f[2]
		}
	}
	return ""
}

func (r *reader) hwlocInfo(p, key string) string {
	s, ok, _ := r.readTrim(p)
	if !ok {
		return ""
	}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (r *reader) meminfoTotal(p, prefix string) (int, bool) {
	s, ok, _ := r.readTrim(p)
	if !ok {
		return 0, false
	}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				if v, err := strconv.Atoi(f[0]); err == nil && v >= 0 {
					return v, true
				}
			}
		}
	}
	return 0, false
}

// readTrim returns the trimmed content of p and whether it exists; other I/O errors
// (permission, a directory in place of a file) are returned.
func (r *reader) readTrim(p string) (string, bool, error) {
	b, err := fs.ReadFile(r.fsys, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			return "", false, nil
		}
		return "", false, &FileError{Path: r.disp(p), Err: ErrMalformed, Detail: err.Error()}
	}
	return trimSysfs(string(b)), true, nil
}

// readIntFile reads one integer; negativeIsNil maps the kernel's -1 ("unknown", e.g.
// physical_package_id on some Arm and s390 systems) to nil.
func (r *reader) readIntFile(p string, negativeIsNil bool) (*int, error) {
	s, ok, err := r.readTrim(p)
	if err != nil || !ok {
		return nil, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return nil, &FileError{Path: r.disp(p), Err: ErrMalformed, Detail: fmt.Sprintf("want an integer, got %q", s)}
	}
	if v < 0 && negativeIsNil {
		return nil, nil
	}
	return &v, nil
}

func isDir(fsys fs.FS, p string) bool {
	st, err := fs.Stat(fsys, p)
	return err == nil && st.IsDir()
}

// disp turns an fs path into the path shown to the user.
func (r *reader) disp(p string) string { return filepath.Join(r.display, filepath.FromSlash(p)) }

func ptr[T any](v T) *T { return &v }

func deref(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
