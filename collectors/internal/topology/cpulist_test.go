package topology

import (
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0-3,8,10-11", []int{0, 1, 2, 3, 8, 10, 11}, true},
		{"", []int{}, true},
		{"\n", []int{}, true},
		{"5\x00\x00\n", []int{5}, true},
		{"3,1,1-2", []int{1, 2, 3}, true},
		{"0-62:2/1", nil, false}, // group < used
		{"0-7:1/4", []int{0, 4}, true},
		{"0-62:2", nil, false},
		{"garbage", nil, false},
		{"1-", nil, false},
		{"-1", nil, false},
		{"3-1", nil, false},
		{"1,,2", nil, false},
		{"0-99999999", nil, false},
		{"+1", nil, false},
	}
	for _, tc := range cases {
		got, err := ParseCPUList(tc.in)
		if (err == nil) != tc.ok || (tc.ok && !slices.Equal(got, tc.want)) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseCPUMask(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0000,00000011,11111111", []int{0, 4, 8, 12, 16, 20, 24, 28, 32, 36}, true},
		{"0000000f", []int{0, 1, 2, 3}, true},
		{"fffff\n", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, true},
		{"00000001,00000000", []int{32}, true},
		{"", nil, false},
		{"xyz", nil, false},
		{"123456789", nil, false},
		{"1,,2", nil, false},
	}
	for _, tc := range cases {
		got, err := ParseCPUMask(tc.in)
		if (err == nil) != tc.ok || (tc.ok && !slices.Equal(got, tc.want)) {
			t.Errorf("ParseCPUMask(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzParseCPUList: never panics; what it accepts is ascending, unique, in range, and
// survives a FormatCPUList round trip. `go test` runs the seeds; `go test -fuzz
// FuzzParseCPUList` explores.
func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8,10-11", "", "garbage", "0", "0-0", "1-", "-", ",", "3-1", "0-7:2/4",
		"0-65535", "65536", "0-1\n", "\x00", "1,1,1", "00-03", "0-3:0/0", "0-3:1/0", " 1 , 2 ", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseCPUList(s)
		if err != nil {
			return
		}
		for i, c := range got {
			if c < 0 || c >= MaxCPU || (i > 0 && c <= got[i-1]) {
				t.Fatalf("ParseCPUList(%q) = %v: not ascending/unique/in range", s, got)
			}
		}
		again, err := ParseCPUList(FormatCPUList(got))
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("round trip of %q: %v -> %q -> %v, %v", s, got, FormatCPUList(got), again, err)
		}
	})
}

func FuzzParseCPUMask(f *testing.F) {
	for _, s := range []string{"0000,00000011,11111111", "f", "", "zz", "ffffffff,ffffffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseCPUMask(s)
		if err != nil {
			return
		}
		if !slices.IsSorted(got) || len(got) > MaxCPU {
			t.Fatalf("ParseCPUMask(%q) = %v", s, got)
		}
	})
}
