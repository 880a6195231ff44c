package tracefs

import (
	"fmt"
	"strconv"
	"strings"
)

// StateFormatter prints sched_switch prev_state the way that kernel's `cat trace` does.
// The letters and masks differ between kernels (e.g. 4.x: 4096-1 and "x K W P N";
// 4.14+: TASK_REPORT masks and "I"), so they are read from the event's own print fmt:
//
//	(REC->prev_state & M1) ? __print_flags(REC->prev_state & M1, "|", {1,"S"}, ...) : "R",
//	REC->prev_state & M2 ? "+" : ""
//
// When the print fmt prints a number (or cannot be understood) the state is printed in
// decimal, as the kernel would for "%ld"/"%d", and Numeric is true.
type StateFormatter struct {
	Numeric  bool
	mask     uint64
	flags    []stateFlag
	delim    string
	zero     string
	plusMask uint64
	plus     string
	small    [512]string // states 0..511: every state the kernel reports
	cache    map[int64]string
}

type stateFlag struct {
	mask uint64
	name string
}

// StateFlag is one entry of the kernel's prev_state letter table.
type StateFlag struct {
	Mask uint64
	Name string
}

// Flags returns the kernel's letter table in print order (nil when Numeric).
func (s *StateFormatter) Flags() []StateFlag {
	out := make([]StateFlag, len(s.flags))
	for i, f := range s.flags {
		out[i] = StateFlag{f.mask, f.name}
	}
	return out
}

// NewStateFormatter builds the formatter from sched_switch's print fmt. The error, when
// not nil, says why it fell back to numbers; the returned formatter is usable anyway.
func NewStateFormatter(printFmt string) (*StateFormatter, error) {
	s := &StateFormatter{Numeric: true, cache: map[int64]string{}}
	err := s.parse(printFmt)
	if err != nil {
		*s = StateFormatter{Numeric: true, cache: map[int64]string{}}
	}
	return s, err
}

func (s *StateFormatter) parse(pf string) error {
	_, args, err := splitPrintFmt(pf)
	if err != nil {
		return err
	}
	flagArg, plusArg := -1, -1
	for i, a := range args {
		if strings.Contains(a, "prev_state") && strings.Contains(a, "__print_flags(") && flagArg < 0 {
			flagArg = i
		} else if strings.Contains(a, "prev_state") && flagArg >= 0 && plusArg < 0 && strings.Contains(a, "?") {
			plusArg = i
		}
	}
	if flagArg < 0 {
		return fmt.Errorf("prev_state is not printed with __print_flags")
	}
	a := args[flagArg]
	p := strings.Index(a, "__print_flags(")
	open := p + len("__print_flags")
	end := matchParen(a, open)
	if end < 0 {
		return fmt.Errorf("unbalanced __print_flags")
	}
	inner := splitTop(a[open+1 : end])
	if len(inner) < 2 {
		return fmt.Errorf("short __print_flags")
	}
	s.mask = ^uint64(0)
	if _, m, ok := strings.Cut(inner[0], "&"); ok {
		if s.mask, err = evalConst(m); err != nil {
			return err
		}
	}
	if s.delim, err = strconv.Unquote(strings.TrimSpace(inner[1])); err != nil {
		return fmt.Errorf("delimiter: %v", err)
	}
	for _, pair := range inner[2:] {
		pair = strings.TrimSpace(pair)
		pair = strings.TrimSuffix(strings.TrimPrefix(pair, "{"), "}")
		kv := splitTop(pair)
		if len(kv) != 2 {
			return fmt.Errorf("flag pair %q", pair)
		}
		v, err := evalConst(kv[0])
		if err != nil {
			return err
		}
		name, err := strconv.Unquote(strings.TrimSpace(kv[1]))
		if err != nil {
			return fmt.Errorf("flag name %q", kv[1])
		}
		s.flags = append(s.flags, stateFlag{v, name})
	}
	// The value printed when the masked state is 0: `: "R"` after __print_flags(...).
	rest := strings.TrimSpace(a[end+1:])
	if z, ok := strings.CutPrefix(rest, ":"); ok {
		if s.zero, err = strconv.Unquote(strings.TrimSpace(z)); err != nil {
			return fmt.Errorf("zero state %q", z)
		}
	}
	if plusArg >= 0 {
		cond, strs, _ := strings.Cut(args[plusArg], "?")
		if _, m, ok := strings.Cut(cond, "&"); ok {
			if s.plusMask, err = evalConst(m); err != nil {
				return err
			}
		}
		yes, _, _ := strings.Cut(strs, ":")
		if s.plus, err = strconv.Unquote(strings.TrimSpace(yes)); err != nil {
			return fmt.Errorf("preempt marker %q", yes)
		}
	}
	s.Numeric = false
	return nil
}

// Format returns the text of one prev_state value (cached: a run has few values).
func (s *StateFormatter) Format(v int64) string {
	if uint64(v) < uint64(len(s.small)) {
		if r := s.small[v]; r != "" {
			return r
		}
		r := s.format(v)
		s.small[v] = r
		return r
	}
	if r, ok := s.cache[v]; ok {
		return r
	}
	r := s.format(v)
	if len(s.cache) < 4096 {
		s.cache[v] = r
	}
	return r
}

func (s *StateFormatter) format(v int64) string {
	var r string
	if s.Numeric {
		r = strconv.FormatInt(v, 10)
	} else {
		var b strings.Builder
		u := uint64(v) & s.mask
		if u == 0 {
			b.WriteString(s.zero)
		} else {
			// The kernel's trace_print_flags_seq: names in table order, then leftovers in hex.
			for _, f := range s.flags {
				if u == 0 {
					break
				}
				if f.mask == 0 || u&f.mask != f.mask {
					continue
				}
				u &^= f.mask
				if b.Len() > 0 {
					b.WriteString(s.delim)
				}
				b.WriteString(f.name)
			}
			if u != 0 {
				if b.Len() > 0 {
					b.WriteString(s.delim)
				}
				b.WriteString("0x" + strconv.FormatUint(u, 16))
			}
		}
		if s.plusMask != 0 && uint64(v)&s.plusMask != 0 {
			b.WriteString(s.plus)
		}
		r = b.String()
	}
	return r
}

// splitPrintFmt splits `"fmt", arg1, arg2` into the format and the top-level args.
func splitPrintFmt(pf string) (string, []string, error) {
	pf = strings.TrimSpace(pf)
	if !strings.HasPrefix(pf, `"`) {
		return "", nil, fmt.Errorf("print fmt does not start with a string")
	}
	end := 1
	for end < len(pf) && pf[end] != '"' {
		if pf[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(pf) {
		return "", nil, fmt.Errorf("unterminated print fmt string")
	}
	parts := splitTop(pf[end+1:])
	if len(parts) > 0 && strings.TrimSpace(parts[0]) == "" {
		parts = parts[1:]
	}
	return pf[1:end], parts, nil
}

// splitTop splits s at commas outside parentheses, braces and string literals.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// matchParen returns the index of the ')' closing the '(' at open, or -1.
func matchParen(s string, open int) int {
	depth := 0
	inStr := false
	for i := open; i < len(s); i++ {
		c := s[i]
		if inStr {
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// evalConst evaluates a C integer constant expression made of numbers, parentheses and
// | ^ & << >> + - ~ (what the kernel's TASK_REPORT macros expand to).
func evalConst(expr string) (uint64, error) {
	p := &constParser{s: expr}
	v, err := p.binary(0)
	if err != nil {
		return 0, err
	}
	p.skip()
	if p.i != len(p.s) {
		return 0, fmt.Errorf("constant expression %q: trailing %q", expr, p.s[p.i:])
	}
	return v, nil
}

type constParser struct {
	s string
	i int
}

func (p *constParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

var binPrec = map[string]int{"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5}

func (p *constParser) peekOp() string {
	p.skip()
	if p.i >= len(p.s) {
		return ""
	}
	if p.i+1 < len(p.s) && (p.s[p.i:p.i+2] == "<<" || p.s[p.i:p.i+2] == ">>") {
		return p.s[p.i : p.i+2]
	}
	switch p.s[p.i] {
	case '|', '^', '&', '+', '-':
		return p.s[p.i : p.i+1]
	}
	return ""
}

func (p *constParser) binary(minPrec int) (uint64, error) {
	lhs, err := p.unary()
	if err != nil {
		return 0, err
	}
	for {
		op := p.peekOp()
		prec, ok := binPrec[op]
		if !ok || prec <= minPrec {
			return lhs, nil
		}
		p.i += len(op)
		rhs, err := p.binary(prec)
		if err != nil {
			return 0, err
		}
		switch op {
		case "|":
			lhs |= rhs
		case "^":
			lhs ^= rhs
		case "&":
			lhs &= rhs
		case "<<":
			lhs <<= rhs & 63
		case ">>":
			lhs >>= rhs & 63
		case "+":
			lhs += rhs
		case "-":
			lhs -= rhs
		}
	}
}

func (p *constParser) unary() (uint64, error) {
	p.skip()
	if p.i >= len(p.s) {
		return 0, fmt.Errorf("constant expression %q: unexpected end", p.s)
	}
	switch c := p.s[p.i]; {
	case c == '(':
		p.i++
		v, err := p.binary(0)
		if err != nil {
			return 0, err
		}
		p.skip()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return 0, fmt.Errorf("constant expression %q: missing )", p.s)
		}
		p.i++
		return v, nil
	case c == '~':
		p.i++
		v, err := p.unary()
		return ^v, err
	case c == '-':
		p.i++
		v, err := p.unary()
		return -v, err
	case c >= '0' && c <= '9':
		j := p.i
		for j < len(p.s) && (isAlnum(p.s[j])) {
			j++
		}
		lit := strings.TrimRight(strings.ToLower(p.s[p.i:j]), "ul")
		p.i = j
		v, err := strconv.ParseUint(lit, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("constant expression %q: %v", p.s, err)
		}
		return v, nil
	}
	return 0, fmt.Errorf("constant expression %q: unexpected %q", p.s, p.s[p.i:])
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
