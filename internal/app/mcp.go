package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/secrets"
	"github.com/baton-agents/baton/internal/toolspec"
)

// mcpWarmTimeout bounds the MCP listings at cold start.
const mcpWarmTimeout = 5 * time.Second

// mcpTools is the MCP manager of the agents' mcp_servers, nil when no
// agent has any. Servers whose credentials do not depend on the tenant
// are listed now (cold start); one that cannot be reached is logged and
// surfaces on runs as tool_source_unavailable, never as a build error.
func mcpTools(ctx context.Context, reg *agents.Registry, f Features, sec *secrets.Resolver, log *slog.Logger) (MCPTools, error) {
	servers := reg.MCPServers()
	if len(servers) == 0 {
		return nil, nil
	}
	if f.MCP == nil {
		return nil, fmt.Errorf("the agents file declares mcp_servers, and this function was built without the MCP client")
	}
	// A cold start waits for the listings a few seconds at most (a
	// Lambda's init phase is 10 s); a server not listed by then is asked
	// again on a later model turn.
	wctx, cancel := context.WithTimeout(ctx, mcpWarmTimeout)
	defer cancel()
	return f.MCP(wctx, servers, sec, log), nil
}

// withMCP routes mcp/<server>/<tool> calls to the MCP manager and every
// other call to tools.
type withMCP struct {
	tools core.ToolExecutor
	mcp   MCPTools
}

func (w withMCP) Execute(ctx context.Context, call core.ToolCall) (any, error) {
	if strings.HasPrefix(call.ToolName, toolspec.MCPToolPrefix) {
		return w.mcp.Execute(ctx, call)
	}
	return w.tools.Execute(ctx, call)
}
