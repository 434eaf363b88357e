package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/mcptools"
	"github.com/baton-agents/baton/internal/secrets"
	"github.com/baton-agents/baton/internal/toolspec"
)

// mcpWarmTimeout bounds the MCP listings at cold start.
const mcpWarmTimeout = 5 * time.Second

// mcpTools is the MCP manager of the agents' mcp_servers, nil when no
// agent has any. Servers whose credentials do not depend on the tenant
// are listed now (cold start); one that cannot be reached is logged and
// surfaces on runs as tool_source_unavailable, never as a build error.
func mcpTools(ctx context.Context, reg *agents.Registry, sec *secrets.Resolver, log *slog.Logger) *mcptools.Manager {
	servers := reg.MCPServers()
	if len(servers) == 0 {
		return nil
	}
	m := mcptools.New(servers, mcptools.Options{Secrets: sec, Log: log})
	// A cold start waits for the listings a few seconds at most (a
	// Lambda's init phase is 10 s); a server not listed by then is asked
	// again on a later model turn.
	wctx, cancel := context.WithTimeout(ctx, mcpWarmTimeout)
	defer cancel()
	m.Warm(wctx)
	return m
}

// withMCP routes mcp/<server>/<tool> calls to the MCP manager and every
// other call to tools.
type withMCP struct {
	tools core.ToolExecutor
	mcp   *mcptools.Manager
}

func (w withMCP) Execute(ctx context.Context, call core.ToolCall) (any, error) {
	if strings.HasPrefix(call.ToolName, toolspec.MCPToolPrefix) {
		return w.mcp.Execute(ctx, call)
	}
	return w.tools.Execute(ctx, call)
}

// ListMCPTools writes, as JSON, the tools an agent of cfg's agents file
// would see from its MCP servers on behalf of tenant (needed when a
// header's secret names {tenant}): their names, descriptions and input
// schemas, and the servers that could not be reached (baton mcp ls).
// It reads the agents file and the servers' secrets only: no store.
func ListMCPTools(ctx context.Context, cfg Config, agent, tenant string, w io.Writer) error {
	cfg = cfg.WithDefaults()
	reg, err := loadAgents(cfg.Agents)
	if err != nil {
		return err
	}
	a, ok := reg.Get(agent)
	if !ok {
		return fmt.Errorf("no agent %q in the agents file (have %s)", agent, strings.Join(reg.Slugs(), ", "))
	}
	if len(a.MCP) == 0 {
		return fmt.Errorf("agent %s has no mcp_servers", agent)
	}
	getenv := func(k string) string { v, _ := cfg.Env(k); return v }
	sec := secrets.New(secrets.Options{AWS: awsenv.Lazy(awsenv.Options{Region: cfg.Region}), Getenv: getenv})
	got := mcptools.New(map[string][]toolspec.MCPServer{agent: a.MCP}, mcptools.Options{Secrets: sec}).Discover(ctx, agent, tenant)
	type tool struct {
		Name         string         `json:"name"`
		Description  string         `json:"description"`
		Parameters   map[string]any `json:"parameters"`
		ActionPolicy string         `json:"action_policy,omitempty"`
	}
	type failure struct {
		Source string `json:"source"`
		Error  string `json:"error"`
	}
	out := struct {
		Agent       string    `json:"agent"`
		Tools       []tool    `json:"tools"`
		Unavailable []failure `json:"unavailable,omitempty"`
	}{Agent: agent, Tools: []tool{}}
	for _, d := range got.Tools {
		out.Tools = append(out.Tools, tool{Name: d.Name, Description: d.Description, Parameters: d.Parameters, ActionPolicy: d.ActionPolicy})
	}
	for _, f := range got.Unavailable {
		out.Unavailable = append(out.Unavailable, failure{Source: f.Source, Error: f.Error})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if len(out.Unavailable) > 0 {
		return fmt.Errorf("%d MCP server(s) could not be reached", len(out.Unavailable))
	}
	return nil
}
