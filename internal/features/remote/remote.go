// Package remote is the one feature the sweeper links: the A2A client of
// remote agent tools (internal/a2atool), with which it cancels the remote
// tasks runs gave up on, without the model providers, the MCP client and
// the span exporter of internal/features.
package remote

import (
	"github.com/baton-agents/baton/internal/a2atool"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/secrets"
)

// A2A builds the executors of remote A2A agent tools.
func A2A(sec *secrets.Resolver) executors.Factory {
	return a2atool.Factory(a2atool.Options{Secrets: sec})
}

// Cancel is the sweeper's features: the A2A client alone.
var Cancel = app.Features{A2A: A2A}
