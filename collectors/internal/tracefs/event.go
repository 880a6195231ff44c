package tracefs

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"placemap/collectors/internal/schema"
)

// Event is one decoded record in the terms of schemas/events.json. Which of the
// nullable columns are set follows from Kind (see Has* helpers): a writer emits null
// for a column its kind does not define.
type Event struct {
	TsNs      int64
	CPU       int32
	Kind      schema.Kind
	CurPid    int32
	Pid       int32
	Comm      string
	Prio      int32
	HasPrio   bool
	TargetCPU int32 // wakeup_new, waking, wakeup (HasTarget)
	HasTarget bool
	OrigCPU   int32 // migrate
	DestCPU   int32 // migrate
	PrevState string
	NextPid   int32
	NextComm  string
	NextPrio  int32
	ChildPid  int32
	ChildComm string
	Filename  string
	OldPid    int32
	// LostEvents is the count of a lost record; -1 when the kernel only flagged a loss
	// without storing the count (no room left on the page).
	LostEvents int64
	LLC        int32   // llc_util: the LLC index
	Util       float32 // llc_util: busy fraction 0..1
}

// Sink receives events in timestamp order (stable: equal timestamps keep CPU order).
// The *Event is reused after Add returns; copy what must outlive the call.
type Sink interface {
	Add(ev *Event) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ev *Event) error

// Add calls f.
func (f SinkFunc) Add(ev *Event) error { return f(ev) }

// kindByTracepoint maps the modelled tracepoints to schema kinds.
var kindByTracepoint = map[string]schema.Kind{
	"sched_wakeup_new":   schema.KindWakeupNew,
	"sched_waking":       schema.KindWaking,
	"sched_wakeup":       schema.KindWakeup,
	"sched_migrate_task": schema.KindMigrate,
	"sched_switch":       schema.KindSwitch,
	"sched_process_fork": schema.KindFork,
	"sched_process_exit": schema.KindExit,
	"sched_process_exec": schema.KindExec,
}

// Interner returns one shared string per distinct byte content, so a run's millions of
// comms cost a handful of allocations. It also escapes bytes that are not UTF-8 as \xNN.
//
// Fixed 16-byte comm arrays (the common case) first go through a direct-mapped cache
// keyed by the raw 16 bytes as two words: a hit is two loads and two compares, no
// hashing of a string, no NUL scan.
type Interner struct {
	m       map[string]string
	cache   []commSlot
	Escaped int // distinct names that needed escaping
}

type commSlot struct {
	a, b uint64
	s    string // "" marks an empty slot (an all-NUL comm just takes the slow path)
}

const commCacheSize = 1024 // power of two; 32 KiB, stays in cache

// NewInterner returns an empty interner.
func NewInterner() *Interner {
	return &Interner{m: make(map[string]string, 1024), cache: make([]commSlot, commCacheSize)}
}

// Array16 returns the string of a 16-byte char array (up to its first NUL).
func (in *Interner) Array16(b []byte) string {
	_ = b[15]
	a := binary.LittleEndian.Uint64(b)
	c := binary.LittleEndian.Uint64(b[8:])
	h := a*0x9E3779B97F4A7C15 ^ c*0xC2B2AE3D27D4EB4F
	sl := &in.cache[(h^h>>32)&(commCacheSize-1)]
	if sl.a == a && sl.b == c && sl.s != "" {
		return sl.s
	}
	s := in.Bytes(b)
	*sl = commSlot{a, c, s}
	return s
}

// Bytes returns the string for b (up to the first NUL).
func (in *Interner) Bytes(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if s, ok := in.m[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := EscapeBytes(b)
	if len(s) != len(b) || s != string(b) {
		in.Escaped++
	}
	if len(in.m) < 1<<20 {
		in.m[string(b)] = s
	}
	return s
}

// EscapeBytes returns b as a string with every byte that is not part of valid UTF-8
// written as \xNN (lower-case hex), the events.json convention for comm.
func EscapeBytes(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			out = append(out, '\\', 'x', hex[b[0]>>4], hex[b[0]&15])
			b = b[1:]
			continue
		}
		out = append(out, b[:n]...)
		b = b[n:]
	}
	return string(out)
}
