package live

// priority.go owns the collector's scheduling priority and how many threads run its Go code
// (CPUsPerProc). A live collector must read the kernel's per-CPU buffers and send batches
// within a fraction of a second of each event while the traced workload may keep every CPU
// busy: with a workload started from the
// same shell (one autogroup holding hundreds of runnable tasks), a nice-0 collector
// waits for a turn at every wakeup and its events reach the viewers seconds late. It
// uses little CPU (a few percent of one at hackbench -g 8), so it asks for a higher
// priority (a lower nice value) for every thread it has; threads made later inherit it.
//
// A nice value only weighs against tasks of the same autogroup (or cgroup). A workload
// started in a session of its own (another shell, a service) is another autogroup, and
// the collector's threads then wait behind it for up to hundreds of milliseconds at a
// wakeup whatever their nice value (measured under hackbench -g 8 on 2 CPUs: 650 ms).
// --realtime PRIO is the remedy `perf record -r` offers: SCHED_FIFO at PRIO for every
// thread, inherited by the threads the Go runtime makes later. The collector starts no
// processes; the kernel's RT throttling bounds what it could take.

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// DefaultNice is the live collector's nice value unless --nice says otherwise.
const DefaultNice = -10

// SetNice gives every thread of this process the nice value n (Linux nice is per thread).
func SetNice(n int) error {
	return eachThread(func(tid int) error {
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, n); err != nil && err != unix.ESRCH {
			return fmt.Errorf("setpriority(%d): %w", n, err)
		}
		return nil
	})
}

// MinRealtime and MaxRealtime bound the SCHED_FIFO priorities --realtime accepts.
const (
	MinRealtime = 1
	MaxRealtime = 99
)

// SetRealtime puts every thread of this process in SCHED_FIFO at priority prio.
func SetRealtime(prio int) error {
	if prio < MinRealtime || prio > MaxRealtime {
		return fmt.Errorf("real-time priority %d is outside %d..%d", prio, MinRealtime, MaxRealtime)
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(prio)}
	// A thread the runtime starts while we go through the list may be cloned from one not yet
	// switched: go through again until a pass finds no thread it had not seen.
	done := map[int]bool{}
	for fresh := true; fresh; {
		fresh = false
		err := eachThread(func(tid int) error {
			if done[tid] {
				return nil
			}
			fresh, done[tid] = true, true
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil && err != unix.ESRCH {
				return fmt.Errorf("SCHED_FIFO %d refused (%w): needs root or CAP_SYS_NICE", prio, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// eachThread calls fn with the id of every thread of this process.
func eachThread(fn func(tid int) error) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := fn(tid); err != nil {
			return err
		}
	}
	return nil
}

// CPUsPerProc is how many traced CPUs one Go P (a thread running Go code) serves. The
// collector spends about 1 us per event (decode, merge, batch, compress, send), so one P
// keeps up with about a million events/s; the runtime's default of one P per CPU only
// adds idle threads that wake, spin and sleep again. On an idle 2-CPU host one P instead
// of two took the collector from 1,157-1,218 to 541-741 context switches/s, and under
// hackbench -g 8 from 0.85-1.05 to 0.68-0.76 us/event, with no latency cost.
const CPUsPerProc = 16

// Procs is the number of Ps the live collector runs with on a host of ncpu CPUs, unless
// $GOMAXPROCS says otherwise.
func Procs(ncpu int) int {
	return max(1, ncpu/CPUsPerProc)
}
