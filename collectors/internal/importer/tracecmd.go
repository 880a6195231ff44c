package importer

// tracecmd.go owns what is specific to `trace-cmd report` text: its header lines
// (`version = 6`, `cpus=N`, `CPU N is empty`) and the sched_switch / sched_wakeup*
// forms its sched plugin prints (`prev:pid [prio] S ==> next:pid [prio]`,
// `comm:pid [prio] CPU:NNN`). The line prefix is ftrace's (ftrace.go), optionally after
// a buffer instance's `name:` (handled in parse.go). Leading spaces of a comm in these
// forms cannot be told from trace-cmd's padding after the event name and are lost.

// wakeTracecmd: comm:pid [prio] [success=%d] [CPU:%03d]. `CPU:` holds a colon too, so
// a split that keeps [prio] is preferred (`a:5 [120] CPU:001` is comm a, not
// `a:5 [120] CPU`); only prio-less output falls back to the bare `comm:pid` form.
func wakeTracecmd(b []byte, e *event) (ok, annotated bool) {
	if ok, ann := wakeTracecmdPrio(b, e, true); ok {
		return ok, ann
	}
	return wakeTracecmdPrio(b, e, false)
}

func wakeTracecmdPrio(b []byte, e *event, needPrio bool) (ok, annotated bool) {
	found := candidates(b, 0, ':', func(p int) bool {
		pid, i, ok := parseInt32(b, p+1)
		if !ok || !atEnd(b, i) {
			return false
		}
		e.hasPrio = false
		if j, ok := lit(b, i, " ["); ok {
			prio, j, ok := parseInt32(b, j)
			if !ok {
				return false
			}
			if j, ok = lit(b, j, "]"); !ok || !atEnd(b, j) {
				return false
			}
			e.prio, e.hasPrio, i = prio, true, j
		} else if needPrio {
			return false
		}
		if j, ok := lit(b, i, " success="); ok {
			if _, j, ok = parseInt32(b, j); !ok || !atEnd(b, j) {
				return false
			}
			i = j
		}
		e.hasA = false
		if t, j, ok := keyInt(b, i, kCPU); ok && atEnd(b, j) {
			e.a, e.hasA, i = t, true, j
		}
		e.comm, e.pid = b[:p], pid
		annotated = trailing(b, i)
		return true
	})
	return found, annotated
}

// switchTracecmd: prev_comm:prev_pid [prev_prio] STATE ==> next_comm:next_pid [next_prio]
func switchTracecmd(b []byte, e *event) (ok, annotated bool) {
	found := candidates(b, 0, ':', func(p int) bool {
		pid, i, ok := parseInt32(b, p+1)
		if !ok {
			return false
		}
		if i, ok = lit(b, i, " "); !ok {
			return false
		}
		e.hasPrio = false
		if j, ok := lit(b, i, "["); ok {
			prio, j, ok := parseInt32(b, j)
			if !ok {
				return false
			}
			if j, ok = lit(b, j, "] "); !ok {
				return false
			}
			e.prio, e.hasPrio, i = prio, true, j
		}
		s0 := i
		for i < len(b) && b[i] != ' ' {
			i++
		}
		state := b[s0:i]
		if len(state) == 0 {
			state = nil
		}
		n0, ok := lit(b, i, " ==> ")
		if !ok {
			return false
		}
		var end int
		if !candidates(b, n0, ':', func(q int) bool {
			np, j, ok := parseInt32(b, q+1)
			if !ok || !atEnd(b, j) {
				return false
			}
			e.hasNPrio = false
			if k, ok := lit(b, j, " ["); ok {
				nprio, k, ok := parseInt32(b, k)
				if !ok {
					return false
				}
				if k, ok = lit(b, k, "]"); !ok || !atEnd(b, k) {
					return false
				}
				e.nextPrio, e.hasNPrio, j = nprio, true, k
			}
			e.nextComm, e.nextPid, end = b[n0:q], np, j
			return true
		}) {
			return false
		}
		e.comm, e.pid, e.prevState = b[:p], pid, state
		annotated = trailing(b, end)
		return true
	})
	return found, annotated
}

// isHeaderLine recognises trace-cmd report's header lines.
func isHeaderLine(l []byte) bool {
	if j, ok := lit(l, 0, "version = "); ok {
		_, k, ok := parseUint(l, j)
		return ok && !trailing(l, k)
	}
	if j, ok := lit(l, 0, "cpus="); ok {
		_, k, ok := parseUint(l, j)
		return ok && !trailing(l, k)
	}
	if j, ok := lit(l, 0, "CPU "); ok {
		_, k, ok := parseUint(l, j)
		if !ok {
			return false
		}
		k, ok = lit(l, k, " is empty")
		return ok && !trailing(l, k)
	}
	return false
}
