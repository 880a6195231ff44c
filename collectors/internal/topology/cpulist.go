package topology

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxCPU bounds every CPU number this package accepts. The kernel's NR_CPUS tops out at
// 8192 today; 1<<16 leaves room while keeping a hostile "0-4000000000" from allocating
// gigabytes.
const MaxCPU = 1 << 16

// ParseCPUList parses the kernel's cpulist format ("0-3,8,10-11", as in
// /sys/devices/system/cpu/online or node/nodeN/cpulist) into ascending, de-duplicated
// CPU numbers. The empty string (and whitespace or NUL padding, which some dumps carry)
// is the empty set. The stride form bitmap_parselist also accepts ("0-62:2/1") is
// understood too.
func ParseCPUList(s string) ([]int, error) {
	s = trimSysfs(s)
	if s == "" {
		return []int{}, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("empty element in cpulist %q", s)
		}
		rng, stride, hasStride := strings.Cut(part, ":")
		lo, hi, isRange := strings.Cut(rng, "-")
		a, err := parseCPUNum(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = parseCPUNum(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("descending range %q", part)
			}
		}
		used, group := 1, 1
		if hasStride {
			if !isRange {
				return nil, fmt.Errorf("stride without range in %q", part)
			}
			u, g, ok := strings.Cut(stride, "/")
			if !ok {
				return nil, fmt.Errorf("bad stride %q", part)
			}
			if used, err = strconv.Atoi(u); err != nil || used < 1 {
				return nil, fmt.Errorf("bad stride %q", part)
			}
			if group, err = strconv.Atoi(g); err != nil || group < used || group > MaxCPU {
				return nil, fmt.Errorf("bad stride %q", part)
			}
		}
		for c := a; c <= b; c++ {
			if (c-a)%group < used {
				seen[c] = true
			}
		}
	}
	return sortedKeys(seen), nil
}

func parseCPUNum(s string) (int, error) {
	if s == "" || len(s) > 6 {
		return 0, fmt.Errorf("bad CPU number %q", s)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("bad CPU number %q", s)
		}
	}
	n, _ := strconv.Atoi(s)
	if n >= MaxCPU {
		return 0, fmt.Errorf("CPU number %d out of range (max %d)", n, MaxCPU-1)
	}
	return n, nil
}

// ParseCPUMask parses the kernel's hex cpumask format ("0000,00000011,11111111": 32-bit
// words, most significant first), which old kernels expose without a *_list twin.
func ParseCPUMask(s string) ([]int, error) {
	s = trimSysfs(s)
	if s == "" {
		return nil, fmt.Errorf("empty cpumask")
	}
	words := strings.Split(s, ",")
	if len(words)*32 > MaxCPU {
		return nil, fmt.Errorf("cpumask of %d words is too long", len(words))
	}
	out := []int{}
	for i := len(words) - 1; i >= 0; i-- {
		w := words[i]
		if w == "" || len(w) > 8 {
			return nil, fmt.Errorf("bad cpumask word %q", w)
		}
		v, err := strconv.ParseUint(w, 16, 32)
		if err != nil {
			return nil, fmt.Errorf("bad cpumask word %q", w)
		}
		base := (len(words) - 1 - i) * 32
		for bit := 0; bit < 32; bit++ {
			if v&(1<<bit) != 0 {
				out = append(out, base+bit)
			}
		}
	}
	return out, nil
}

// FormatCPUList is the inverse of ParseCPUList for ascending input ("0-3,8,10-11").
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprintf(&b, "%d", cpus[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		}
		i = j + 1
	}
	return b.String()
}

// trimSysfs strips the whitespace and NUL padding found at the end of sysfs files
// (hwloc-gather-topology dumps keep the NULs of some attributes).
func trimSysfs(s string) string { return strings.Trim(s, " \t\r\n\x00") }

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
