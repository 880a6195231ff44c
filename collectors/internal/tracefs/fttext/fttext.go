// Package fttext is a small, independent reader of ftrace `trace` text and
// `trace-cmd report` text for the sched events, used by the binary decoders' golden tests
// to check every decoded event against what the kernel (or trace-cmd) printed for the
// same buffer. It is deliberately simple (regular expressions, no speed goals) so it
// shares no code, and so no bug, with the decoders it checks.
package fttext

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Line is one event line.
type Line struct {
	No     int    // 1-based line number
	Buffer string // instance prefix of trace-cmd report ("capture:"), "" for the top buffer
	Task   string
	CurPid int32
	CPU    int32
	TsUs   int64 // timestamp in microseconds as printed
	Event  string
	Body   string
}

// parseLine splits `[BUFFER: ]TASK-PID [(TGID)] [CPU] [FLAGS] SECS.USECS: EVENT: BODY`.
func parseLine(t string) (Line, bool) {
	var l Line
	if t != "" && t[0] != ' ' {
		// trace-cmd report prefixes an instance's lines with "NAME:".
		if i := strings.Index(t, ": "); i > 0 && !strings.ContainsAny(t[:i], " [") {
			l.Buffer, t = t[:i], t[i+2:]
		}
	}
	// The [CPU] column: the first " [digits]".
	cpuAt := -1
	for i := 0; i+2 < len(t); i++ {
		if t[i] == '[' && i > 0 && t[i-1] == ' ' {
			j := i + 1
			for j < len(t) && t[j] >= '0' && t[j] <= '9' {
				j++
			}
			if j > i+1 && j < len(t) && t[j] == ']' {
				cpuAt = i
				cpu, _ := strconv.Atoi(t[i+1 : j])
				l.CPU = int32(cpu)
				break
			}
		}
	}
	if cpuAt < 0 {
		return l, false
	}
	task := strings.TrimSpace(t[:cpuAt])
	if strings.HasSuffix(task, ")") { // record-tgid column
		if k := strings.LastIndexByte(task, '('); k > 0 {
			task = strings.TrimSpace(task[:k])
		}
	}
	dash := strings.LastIndexByte(task, '-')
	if dash <= 0 {
		return l, false
	}
	pid, err := strconv.Atoi(task[dash+1:])
	if err != nil {
		return l, false
	}
	l.Task, l.CurPid = task[:dash], int32(pid)
	rest := t[strings.IndexByte(t[cpuAt:], ']')+cpuAt+1:]
	fields := strings.Fields(rest)
	// [FLAGS] TS: EVENT: — the timestamp is the first field "digits.6digits:".
	for i := 0; i < len(fields) && i < 2; i++ {
		f := fields[i]
		dot := strings.IndexByte(f, '.')
		if dot <= 0 || !strings.HasSuffix(f, ":") || len(f)-dot-2 != 6 {
			continue
		}
		secs, err1 := strconv.ParseInt(f[:dot], 10, 64)
		us, err2 := strconv.ParseInt(f[dot+1:len(f)-1], 10, 64)
		if err1 != nil || err2 != nil || i+1 >= len(fields) || !strings.HasSuffix(fields[i+1], ":") {
			return l, false
		}
		l.TsUs = secs*1_000_000 + us
		l.Event = strings.TrimSuffix(fields[i+1], ":")
		// The body is everything after "EVENT:" (spaces inside comms kept).
		at := strings.Index(rest, fields[i+1]) + len(fields[i+1])
		l.Body = strings.TrimRight(strings.TrimLeft(rest[at:], " "), " ")
		return l, true
	}
	return l, false
}

// ReadFile reads a (possibly .gz) text trace and returns its event lines; headers,
// comments and continuation lines are left out.
func ReadFile(path string) ([]Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = gz
	}
	var out []Line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	no := 0
	for sc.Scan() {
		no++
		t := sc.Text()
		if strings.HasPrefix(t, "#") {
			continue
		}
		if l, ok := parseLine(t); ok {
			l.No = no
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// Fields are the sched event fields a body states; Has says which were present.
type Fields struct {
	Pid, Prio, Target, Orig, Dest int32
	NextPid, NextPrio, ChildPid   int32
	OldPid                        int32
	Comm, PrevState, NextComm     string
	ChildComm, Filename           string
	Has                           map[string]bool
}

var (
	wakeK   = regexp.MustCompile(`^comm=(.*) pid=(-?\d+) prio=(-?\d+)(?: success=\d+)? target_cpu=(\d+)$`)
	wakeT   = regexp.MustCompile(`^(.*):(-?\d+) \[(-?\d+)\](?: success=\d+)? CPU:(\d+)$`)
	migK    = regexp.MustCompile(`^comm=(.*) pid=(-?\d+) prio=(-?\d+) orig_cpu=(-?\d+) dest_cpu=(-?\d+)$`)
	switchK = regexp.MustCompile(`^prev_comm=(.*) prev_pid=(-?\d+) prev_prio=(-?\d+) prev_state=(\S+) ==> next_comm=(.*) next_pid=(-?\d+) next_prio=(-?\d+)$`)
	switchT = regexp.MustCompile(`^(.*):(-?\d+) \[(-?\d+)\] (\S+) ==> (.*):(-?\d+) \[(-?\d+)\]$`)
	forkK   = regexp.MustCompile(`^comm=(.*) pid=(-?\d+) child_comm=(.*) child_pid=(-?\d+)$`)
	exitK   = regexp.MustCompile(`^comm=(.*) pid=(-?\d+) prio=(-?\d+)(?: group_dead=\S+)?$`)
	execK   = regexp.MustCompile(`^filename=(.*) pid=(-?\d+) old_pid=(-?\d+)$`)
)

func atoi(s string) int32 {
	n, _ := strconv.Atoi(s)
	return int32(n)
}

// Parse extracts the fields of a modelled sched event's body; ok is false when the
// body does not match the event's kernel or trace-cmd form.
func Parse(event, body string) (f Fields, ok bool) {
	f.Has = map[string]bool{}
	set := func(names ...string) {
		for _, n := range names {
			f.Has[n] = true
		}
	}
	switch event {
	case "sched_wakeup", "sched_wakeup_new", "sched_waking":
		m := wakeK.FindStringSubmatch(body)
		if m == nil {
			m = wakeT.FindStringSubmatch(body)
		}
		if m == nil {
			return f, false
		}
		f.Comm, f.Pid, f.Prio, f.Target = m[1], atoi(m[2]), atoi(m[3]), atoi(m[4])
		set("comm", "pid", "prio", "target")
	case "sched_migrate_task":
		m := migK.FindStringSubmatch(body)
		if m == nil {
			return f, false
		}
		f.Comm, f.Pid, f.Prio, f.Orig, f.Dest = m[1], atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5])
		set("comm", "pid", "prio", "orig", "dest")
	case "sched_switch":
		m := switchK.FindStringSubmatch(body)
		if m == nil {
			m = switchT.FindStringSubmatch(body)
		}
		if m == nil {
			return f, false
		}
		f.Comm, f.Pid, f.Prio, f.PrevState = m[1], atoi(m[2]), atoi(m[3]), m[4]
		f.NextComm, f.NextPid, f.NextPrio = m[5], atoi(m[6]), atoi(m[7])
		set("comm", "pid", "prio", "prev_state", "next_comm", "next_pid", "next_prio")
	case "sched_process_fork":
		m := forkK.FindStringSubmatch(body)
		if m == nil {
			return f, false
		}
		f.Comm, f.Pid, f.ChildComm, f.ChildPid = m[1], atoi(m[2]), m[3], atoi(m[4])
		set("comm", "pid", "child_comm", "child_pid")
	case "sched_process_exit":
		m := exitK.FindStringSubmatch(body)
		if m == nil {
			return f, false
		}
		f.Comm, f.Pid, f.Prio = m[1], atoi(m[2]), atoi(m[3])
		set("comm", "pid", "prio")
	case "sched_process_exec":
		m := execK.FindStringSubmatch(body)
		if m == nil {
			return f, false
		}
		f.Filename, f.Pid, f.OldPid = m[1], atoi(m[2]), atoi(m[3])
		set("filename", "pid", "old_pid")
	default:
		return f, false
	}
	return f, true
}

// KindOf maps a tracepoint name to the schema kind name.
var KindOf = map[string]string{
	"sched_wakeup_new":   "wakeup_new",
	"sched_waking":       "waking",
	"sched_wakeup":       "wakeup",
	"sched_migrate_task": "migrate",
	"sched_switch":       "switch",
	"sched_process_fork": "fork",
	"sched_process_exit": "exit",
	"sched_process_exec": "exec",
}
