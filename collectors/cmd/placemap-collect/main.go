// Command placemap-collect is placemap's host-side binary: topology reader, trace importer
// and (later) live tracefs collector. main only dispatches; each subcommand lives in its
// own file (topology.go, import.go, ...) and owns its flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// usageErr marks a command-line mistake: exit status 2 instead of 1.
type usageErr struct{ msg string }

func (e usageErr) Error() string { return e.msg }

// usageError formats a usage error; subcommands return it for bad flags or arguments.
func usageError(format string, a ...any) error { return usageErr{fmt.Sprintf(format, a...)} }

const usage = `usage: placemap-collect <command> [flags]

commands:
  topology   read the CPU topology from sysfs (--sysfs-root DIR for a dump) and print it
  import     convert a trace file into placemap's event format
  live       stream this host's scheduler events to a placemap backend (root; tracefs)
`

var commands = map[string]func(args []string) error{
	"topology": runTopology,
	"import":   runImport,
	"live":     runLive,
}

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run dispatches to a subcommand and turns its error into the exit status:
// 0 ok, 1 runtime error, 2 usage. A subcommand's errors start with its name
// ("topology: ..."), so stderr gets one line "placemap-collect: <what>: <why>".
func run(args []string, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "placemap-collect: %s: unknown command\n%s", args[0], usage)
		return 2
	}
	if err := cmd(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "placemap-collect: %v\n", err)
		if errors.As(err, new(usageErr)) {
			return 2
		}
		return 1
	}
	return 0
}
