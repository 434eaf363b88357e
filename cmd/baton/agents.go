package main

import (
	"fmt"
	"io"

	"github.com/baton-agents/baton/internal/app"
)

const agentsUsage = `usage: baton agents validate FILE

Checks an agents file and prints every problem with its path, or
"FILE: ok (N agents: …)". It checks the file's JSON Schema
(events/schemas/agents-file.schema.json: unknown fields, types, required
fields) and what Baton checks when it loads the file (durations, tool
declarations, secret sources, hooks, overrides, duplicate slugs). It reads
no secret and reaches no MCP server: those are checked at start-up.
Exit 0 when the file is valid, 1 when it has problems, 2 on bad usage.
`

// runAgents is baton agents validate FILE.
func runAgents(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, agentsUsage)
		return 0
	}
	if len(args) != 2 || args[0] != "validate" {
		fmt.Fprint(stderr, agentsUsage)
		return 2
	}
	valid, err := app.ValidateAgentsFile(args[1], stdout)
	if err != nil {
		fmt.Fprintf(stderr, "baton agents validate: %v\n", err)
		return 1
	}
	if !valid {
		return 1
	}
	return 0
}
