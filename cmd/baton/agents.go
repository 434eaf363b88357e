package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/baton-agents/baton/internal/app"
)

const agentsUsage = `usage: baton agents validate [--go-handlers NAME,…] FILE

Checks an agents file and prints every problem in one pass, each as
FILE:LINE:COLUMN: PATH: MESSAGE, with the nearest valid name for a
misspelt one ("did you mean"), or "FILE: ok (N agents: …)". It checks the
file's JSON Schema (events/schemas/agents-file.schema.json: unknown
fields, types, required fields, enumerations), what Baton checks when it
loads the file (durations, tool declarations, secret sources, hooks,
overrides, duplicate slugs, handoff and agent-tool targets), and what
this build provides: the model providers Baton knows and the Go tool
handlers it registers (echo; --go-handlers adds those a bundle of your
own registers). It reads no secret and reaches no MCP server: those are
checked at start-up. Exit 0 when the file is valid, 1 when it has
problems, 2 on bad usage.
`

// runAgents is baton agents validate FILE.
func runAgents(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, agentsUsage)
		return 0
	}
	if len(args) < 1 || args[0] != "validate" {
		fmt.Fprint(stderr, agentsUsage)
		return 2
	}
	fs := flag.NewFlagSet("baton agents validate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	handlers := fs.String("go-handlers", "", "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 1 {
		fmt.Fprint(stderr, agentsUsage)
		return 2
	}
	valid, err := app.ValidateAgentsFile(fs.Arg(0), app.List(*handlers), stdout)
	if err != nil {
		fmt.Fprintf(stderr, "baton agents validate: %v\n", err)
		return 1
	}
	if !valid {
		return 1
	}
	return 0
}
