package importer

import (
	"math/rand"
	"testing"

	"placemap/collectors/internal/schema"
)

// The word-at-a-time helpers must agree with the byte loops they replace on every
// input: each byte value at each position of short slices (the borrow across bytes is
// the risky part), then random slices over a small alphabet around the boundaries.
func TestWordScansMatchByteLoops(t *testing.T) {
	slowToSpace := func(b []byte, i int) int {
		for i < len(b) && b[i] > ' ' {
			i++
		}
		return i
	}
	slowASCII := func(s []byte) bool {
		for _, c := range s {
			if c >= 0x80 {
				return false
			}
		}
		return true
	}
	check := func(b []byte) {
		t.Helper()
		for i := 0; i <= len(b); i++ {
			if got, want := toSpace(b, i), slowToSpace(b, i); got != want {
				t.Fatalf("toSpace(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
		if got, want := ascii(b), slowASCII(b); got != want {
			t.Fatalf("ascii(%q) = %v, want %v", b, got, want)
		}
	}
	for n := 0; n <= 19; n++ {
		for p := 0; p < n; p++ {
			for v := 0; v < 256; v++ {
				b := make([]byte, n)
				for i := range b {
					b[i] = 'a'
				}
				b[p] = byte(v)
				check(b)
				if p+1 < n {
					b[p+1] = 0x21 // the byte a borrow would wrap
					check(b)
				}
			}
		}
	}
	alphabet := []byte{0, '\t', ' ', '!', '"', 'a', '~', 0x7f, 0x80, 0xa0, 0xff}
	rng := rand.New(rand.NewSource(1))
	for r := 0; r < 20000; r++ {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		check(b)
	}
}

// kindOf matches exactly the eight sched names, and nothing that shares their length
// and their first or last eight bytes.
func TestKindOfExact(t *testing.T) {
	want := map[string]schema.Kind{
		"sched_wakeup_new": schema.KindWakeupNew, "sched_waking": schema.KindWaking,
		"sched_wakeup": schema.KindWakeup, "sched_migrate_task": schema.KindMigrate,
		"sched_switch": schema.KindSwitch, "sched_process_fork": schema.KindFork,
		"sched_process_exit": schema.KindExit, "sched_process_exec": schema.KindExec,
	}
	for name, k := range want {
		if got, ok := kindOf([]byte(name)); !ok || got != k {
			t.Fatalf("kindOf(%q) = %v %v, want %v", name, got, ok, k)
		}
		for i := range name {
			b := []byte(name)
			b[i] ^= 0x20
			if _, ok := want[string(b)]; ok {
				continue
			}
			if got, ok := kindOf(b); ok {
				t.Fatalf("kindOf(%q) = %v, want no kind", b, got)
			}
		}
		for _, s := range []string{name[1:], name + "_", "x" + name} {
			if _, ok := kindOf([]byte(s)); ok {
				t.Fatalf("kindOf(%q) matched", s)
			}
		}
	}
	for _, s := range []string{"", "sched_", "sched_switc", "sched_stat_runtime", "sched_kthread_stop"} {
		if _, ok := kindOf([]byte(s)); ok {
			t.Fatalf("kindOf(%q) matched", s)
		}
	}
}

// keyInt matches its key in full: changing any byte of the key refuses it.
func TestKeyIntExact(t *testing.T) {
	keys := map[string]fieldKey{
		" pid=": kPid, " prio=": kPrio, " target_cpu=": kTargetCPU, " orig_cpu=": kOrigCPU,
		" dest_cpu=": kDestCPU, " prev_pid=": kPrevPid, " prev_prio=": kPrevPrio,
		" next_pid=": kNextPid, " next_prio=": kNextPrio, " child_pid=": kChildPid,
		" old_pid=": kOldPid, " CPU:": kCPU,
	}
	for s, k := range keys {
		b := []byte("x" + s + "-42 y")
		if v, j, ok := keyInt(b, 1, k); !ok || v != -42 || j != len(b)-2 {
			t.Fatalf("keyInt(%q) = %d %d %v", b, v, j, ok)
		}
		if _, _, ok := keyInt(b[:len(s)], 1, k); ok {
			t.Fatalf("keyInt on a cut key %q matched", b[:len(s)])
		}
		for i := 1; i <= len(s); i++ {
			c := append([]byte(nil), b...)
			c[i] ^= 0x01
			if _, _, ok := keyInt(c, 1, k); ok {
				t.Fatalf("keyInt(%q, %q) matched", c, s)
			}
		}
	}
}
