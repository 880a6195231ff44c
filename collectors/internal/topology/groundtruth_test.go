package topology

// Parsers for the ground truth shipped beside the sysfs dumps in ../shared/topologies:
// util-linux `lscpu` expected output (parsable tables) and hwloc `lstopo -v` console
// output or XML. The tests derive the expected LLC groups, cores, NUMA nodes and
// distances from these files, never from this package's own output.

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// truth is what a ground-truth file says, as partitions of CPUs (each group sorted) and
// per-CPU NUMA node ids. Missing knowledge is absent, not guessed.
type truth struct {
	source         string
	cpus           []int         // CPUs the file describes (online, as the tool saw them)
	llcs           [][]int       // LLC groups
	cores          [][]int       // core groups
	nodeOf         map[int]int   // CPU -> NUMA node id (absent: the file gives none)
	nodes          map[int][]int // node id -> CPUs, when the file lists nodes as objects
	noNodeInfo     bool          // lscpu printed an empty Node column (kernel without NUMA)
	llcCovers      bool          // llcs cover every CPU in cpus (false: only the groups listed are known)
	distances      map[[2]int]int
	llcFromPkgNode bool // no cache columns at all: LLC expected to be (Socket, Node)
}

func groupsFrom(keyOf map[int]string) [][]int {
	by := map[string][]int{}
	for c, k := range keyOf {
		by[k] = append(by[k], c)
	}
	var out [][]int
	for _, g := range by {
		sort.Ints(g)
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// parseLscpuExpected reads the util-linux expected file: a summary, then the parsable
// table with logical ids (`lscpu -p`), then the same with physical ids (`lscpu -p
// --physical`). Only the column header lines start a table.
func parseLscpuExpected(path string) (*truth, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type table struct {
		cols []string
		rows [][]string
	}
	var tables []*table
	var cur *table
	modelNames := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Model name:"):
			modelNames++
		case strings.HasPrefix(line, "# CPU,"):
			cur = &table{cols: strings.Split(strings.TrimPrefix(line, "# "), ",")}
			tables = append(tables, cur)
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
			if strings.TrimSpace(line) == "" {
				cur = nil
			}
		case cur != nil:
			cur.rows = append(cur.rows, strings.Split(line, ","))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("%s: no parsable table", path)
	}
	logical := tables[0]
	col := func(t *table, name string) int {
		for i, c := range t.cols {
			if c == name {
				return i
			}
		}
		return -1
	}
	// The LLC column: the highest-level cache that is not an instruction cache.
	cacheRe := regexp.MustCompile(`^L(\d+)(d?)$`)
	llcCol, llcLevel := -1, 0
	for i, c := range logical.cols {
		if m := cacheRe.FindStringSubmatch(c); m != nil {
			lvl, _ := strconv.Atoi(m[1])
			if lvl > llcLevel {
				llcCol, llcLevel = i, lvl
			}
		}
	}
	tr := &truth{source: path, nodeOf: map[int]int{}, llcCovers: true}
	cpuCol, nodeCol, sockCol := col(logical, "CPU"), col(logical, "Node"), col(logical, "Socket")
	coreKey, llcKey := map[int]string{}, map[int]string{}
	// Heterogeneous Arm systems number logical cores per CPU type, so (Socket, Core) of
	// the logical table is not unique there; the physical table's pair is.
	coreTable := logical
	if modelNames > 1 && len(tables) > 1 {
		coreTable = tables[1]
	}
	cpuRow := map[int][]string{}
	for _, row := range coreTable.rows {
		c, err := strconv.Atoi(row[col(coreTable, "CPU")])
		if err != nil {
			return nil, fmt.Errorf("%s: bad CPU %q", path, row[0])
		}
		cpuRow[c] = row
	}
	for _, row := range logical.rows {
		c, err := strconv.Atoi(row[cpuCol])
		if err != nil {
			return nil, fmt.Errorf("%s: bad CPU %q", path, row[cpuCol])
		}
		tr.cpus = append(tr.cpus, c)
		if row[nodeCol] == "" {
			tr.noNodeInfo = true
		} else {
			n, err := strconv.Atoi(row[nodeCol])
			if err != nil {
				return nil, fmt.Errorf("%s: bad node %q", path, row[nodeCol])
			}
			tr.nodeOf[c] = n
		}
		pr := cpuRow[c]
		coreKey[c] = pr[col(coreTable, "Socket")] + "/" + pr[col(coreTable, "Core")]
		if llcCol >= 0 {
			llcKey[c] = row[llcCol]
		} else {
			llcKey[c] = row[sockCol] + "/" + row[nodeCol]
			tr.llcFromPkgNode = true
		}
	}
	tr.llcs = groupsFrom(llcKey)
	tr.cores = groupsFrom(coreKey)
	return tr, nil
}

// hwloc console (`lstopo -v -`) tree.
type hnode struct {
	typ      string
	logical  int
	os       int // -1 when no P#
	parent   *hnode
	children []*hnode
}

var hlineRe = regexp.MustCompile(`^( *)([A-Za-z0-9]+)(?:\([^)]*\))? L#(\d+)(?: \((.*)\))?`)
var hosRe = regexp.MustCompile(`(?:^|\s)P#(\d+)`)

func parseHwlocConsole(path string) (*truth, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "Machine") {
		return nil, fmt.Errorf("%s: does not start with Machine", path)
	}
	root := &hnode{typ: "Machine", os: 0}
	stack := []*hnode{root}
	indents := []int{-1}
	i := 1
	nodeOS := map[int]int{} // NUMANode logical -> os
	for ; i < len(lines); i++ {
		m := hlineRe.FindStringSubmatch(lines[i])
		if m == nil || len(m[1]) == 0 {
			break
		}
		ind := len(m[1])
		for indents[len(indents)-1] >= ind {
			stack, indents = stack[:len(stack)-1], indents[:len(indents)-1]
		}
		n := &hnode{typ: m[2], os: -1, parent: stack[len(stack)-1]}
		n.logical, _ = strconv.Atoi(m[3])
		if pm := hosRe.FindStringSubmatch(m[4]); pm != nil {
			n.os, _ = strconv.Atoi(pm[1])
		}
		if n.typ == "NUMANode" {
			nodeOS[n.logical] = n.os
		}
		n.parent.children = append(n.parent.children, n)
		stack, indents = append(stack, n), append(indents, ind)
	}
	tr := &truth{source: path, nodeOf: map[int]int{}, nodes: map[int][]int{}, distances: map[[2]int]int{}}
	llcKey, coreKey := map[int]string{}, map[int]string{}
	var walk func(n *hnode)
	walk = func(n *hnode) {
		if n.typ == "PU" {
			tr.cpus = append(tr.cpus, n.os)
			var llc *hnode
			for a := n.parent; a != nil; a = a.parent {
				if isDataCache(a.typ) {
					llc = a // keep climbing: the outermost cache is the last level
				}
				if a.typ == "Core" {
					coreKey[n.os] = fmt.Sprintf("%p", a)
				}
			}
			if llc != nil {
				llcKey[n.os] = fmt.Sprintf("%p", llc)
			}
			for a := n.parent; a != nil; a = a.parent {
				if ids := memoryNodes(a); len(ids) > 0 {
					if len(ids) == 1 {
						tr.nodeOf[n.os] = ids[0]
					}
					break
				}
			}
		}
		if n.typ == "NUMANode" {
			if _, ok := tr.nodes[n.os]; !ok {
				tr.nodes[n.os] = []int{}
			}
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(root)
	for c, n := range tr.nodeOf {
		tr.nodes[n] = append(tr.nodes[n], c)
	}
	for _, cpus := range tr.nodes {
		sort.Ints(cpus)
	}
	sort.Ints(tr.cpus)
	tr.llcs = groupsFrom(llcKey)
	tr.cores = groupsFrom(coreKey)
	tr.llcCovers = len(llcKey) == len(tr.cpus)
	// "Relative latency matrix ... by logical indexes:", header "index a b c" (the
	// logical indexes of the nodes in the matrix order), then one row per node.
	for ; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "Relative latency matrix") || !strings.Contains(lines[i], "NUMANode") {
			continue
		}
		head := strings.Fields(lines[i+1])
		if len(head) == 0 || head[0] != "index" {
			return nil, fmt.Errorf("%s:%d: no index header", path, i+2)
		}
		var order []int
		for _, h := range head[1:] {
			l, _ := strconv.Atoi(h)
			order = append(order, nodeOS[l])
		}
		for r := range order {
			f := strings.Fields(lines[i+2+r])
			for cidx := range order {
				v, err := strconv.Atoi(f[cidx+1])
				if err != nil {
					return nil, fmt.Errorf("%s:%d: bad distance", path, i+3+r)
				}
				tr.distances[[2]int{order[r], order[cidx]}] = v
			}
		}
		break
	}
	return tr, nil
}

func isDataCache(typ string) bool {
	return regexp.MustCompile(`^L\d+d?Cache$`).MatchString(typ)
}

// memoryNodes: NUMA nodes attached to n as memory children (directly, or behind a
// memory-side cache).
func memoryNodes(n *hnode) []int {
	var ids []int
	for _, c := range n.children {
		switch c.typ {
		case "NUMANode":
			ids = append(ids, c.os)
		case "MemCache":
			ids = append(ids, memoryNodes(c)...)
		}
	}
	return ids
}

// hwloc XML (topology v2): objects carry complete_cpuset, which survives cgroup
// restriction, so groups are known in full even when the topology shows part of them.
type xobj struct {
	Type           string `xml:"type,attr"`
	OSIndex        string `xml:"os_index,attr"`
	Cpuset         string `xml:"cpuset,attr"`
	CompleteCpuset string `xml:"complete_cpuset,attr"`
	Children       []xobj `xml:"object"`
}

type xdist struct {
	Type    string   `xml:"type,attr"`
	Name    string   `xml:"name,attr"`
	Indexes string   `xml:"indexes"`
	Values  []string `xml:"u64values"`
}

type xtopo struct {
	Objects   []xobj  `xml:"object"`
	Distances []xdist `xml:"distances2"`
}

func parseHwlocSet(s string) ([]int, error) {
	var words []string
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimPrefix(w, "0x")
		if w == "" || w == "f...f" {
			return nil, fmt.Errorf("unsupported hwloc set %q", s)
		}
		words = append(words, w)
	}
	return ParseCPUMask(strings.Join(words, ","))
}

func parseHwlocXML(path string) (*truth, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t xtopo
	if err := xml.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	tr := &truth{source: path, nodeOf: map[int]int{}, nodes: map[int][]int{}, distances: map[[2]int]int{}}
	seen := map[string]bool{}
	var walk func(o xobj, inCache bool) error
	walk = func(o xobj, inCache bool) error {
		set, err := parseHwlocSet(o.CompleteCpuset)
		if err != nil {
			return err
		}
		switch {
		case o.Type == "PU":
			c, _ := strconv.Atoi(o.OSIndex)
			tr.cpus = append(tr.cpus, c)
		case o.Type == "NUMANode":
			n, _ := strconv.Atoi(o.OSIndex)
			tr.nodes[n] = set
			for _, c := range set {
				tr.nodeOf[c] = n
			}
		case o.Type == "Core":
			tr.cores = append(tr.cores, set)
		case !inCache && (o.Type == "L1Cache" || regexp.MustCompile(`^L\d+Cache$`).MatchString(o.Type)) && len(set) > 0:
			if k := FormatCPUList(set); !seen[k] {
				seen[k] = true
				tr.llcs = append(tr.llcs, set)
			}
			inCache = true
		}
		for _, c := range o.Children {
			if err := walk(c, inCache); err != nil {
				return err
			}
		}
		return nil
	}
	for _, o := range t.Objects {
		if err := walk(o, false); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	sort.Ints(tr.cpus)
	for _, d := range t.Distances {
		if d.Type != "NUMANode" || d.Name != "NUMALatency" {
			continue
		}
		var idx, vals []int
		for _, f := range strings.Fields(d.Indexes) {
			v, _ := strconv.Atoi(f)
			idx = append(idx, v)
		}
		for _, chunk := range d.Values {
			for _, f := range strings.Fields(chunk) {
				v, _ := strconv.Atoi(f)
				vals = append(vals, v)
			}
		}
		if len(vals) != len(idx)*len(idx) {
			return nil, fmt.Errorf("%s: %d distances for %d nodes", path, len(vals), len(idx))
		}
		for a := range idx {
			for b := range idx {
				tr.distances[[2]int{idx[a], idx[b]}] = vals[a*len(idx)+b]
			}
		}
	}
	return tr, nil
}
