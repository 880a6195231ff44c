package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"placemap/collectors/internal/topology"
)

// runTopology implements `placemap-collect topology [--sysfs-root DIR] [--json]`.
func runTopology(args []string) error {
	return topologyCmd(args, os.Stdout, os.Stderr)
}

func topologyCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("topology", flag.ContinueOnError)
	// The flag package's own messages would add lines; errors are reported once by main.
	fs.SetOutput(io.Discard)
	root := fs.String("sysfs-root", "/", "read DIR/sys/devices/system/{cpu,node} (an extracted sysfs dump) instead of the running machine's")
	asJSON := fs.Bool("json", false, "print the topology as JSON (topology.schema.json); otherwise a short summary")
	quiet := fs.Bool("quiet", false, "do not print warnings about information sysfs lacked")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stderr, "usage: placemap-collect topology [--sysfs-root DIR] [--json] [--quiet]")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return err
		}
		return usageError("topology: %v", err)
	}
	if fs.NArg() > 0 {
		return usageError("topology: unexpected argument %q", fs.Arg(0))
	}
	res, err := topology.Read(*root)
	if err != nil {
		return fmt.Errorf("topology: %w", err)
	}
	if !*quiet {
		for _, w := range res.Warnings {
			fmt.Fprintf(stderr, "placemap-collect: topology: warning: %s\n", w)
		}
	}
	t := res.Topology
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(t); err != nil {
			return fmt.Errorf("topology: writing JSON: %w", err)
		}
		return nil
	}
	online := 0
	cores := map[int]bool{}
	for _, c := range t.Cpus {
		if c.Online {
			online++
		}
		if c.Core != nil {
			cores[*c.Core] = true
		}
	}
	_, err = fmt.Fprintf(stdout, "%s: %d CPUs (%d online), %d cores, %d LLCs, %d NUMA nodes\n",
		t.Machine, len(t.Cpus), online, len(cores), len(t.Llcs), len(t.NumaNodes))
	return err
}
