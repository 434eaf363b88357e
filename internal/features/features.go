// Package features holds the heavy subsystems a Baton function links only
// when it runs them (app.Features): the model providers' SDKs, Amazon
// Bedrock Guardrails (the Bedrock runtime client), the MCP client, the
// A2A client, long-term memory (its embedders) and the OpenTelemetry
// exporter; and the EventBridge Scheduler client of schedules. baton dev
// and the worker link All (without the Scheduler client: baton dev fires
// schedules in process); the API only the exporter and the Scheduler
// client (internal/features/spans); the sweeper only the A2A client
// (internal/features/remote); the intake function none of them.
package features

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/features/remote"
	"github.com/baton-agents/baton/internal/guardrails/bedrock"
	"github.com/baton-agents/baton/internal/mcptools"
	"github.com/baton-agents/baton/internal/memory"
	"github.com/baton-agents/baton/internal/providers"
	bedrockrt "github.com/baton-agents/baton/internal/providers/bedrock"
	"github.com/baton-agents/baton/internal/providers/setup"
	"github.com/baton-agents/baton/internal/secrets"
	"github.com/baton-agents/baton/internal/telemetry/otelsetup"
	"github.com/baton-agents/baton/internal/toolspec"
)

// All is every feature.
var All = app.Features{Models: Models, MCP: MCP, A2A: remote.A2A, Tracing: otelsetup.Setup, BedrockGuardrails: bedrock.Lazy, Memory: Memory}

// Models builds the enabled model providers (internal/providers/setup).
func Models(ctx context.Context, enabled []string, pc providers.Config, aws awsenv.Loader, sec *secrets.Resolver, log *slog.Logger) (core.ModelRouter, error) {
	return setup.Router(ctx, enabled, pc, setup.Deps{AWS: aws, Secrets: sec, Log: log})
}

// MCP opens the agents' MCP servers and lists their tools until ctx ends
// (a server not listed by then is asked again on a later turn).
func MCP(ctx context.Context, servers map[string][]toolspec.MCPServer, sec *secrets.Resolver, log *slog.Logger) app.MCPTools {
	m := mcptools.New(servers, mcptools.Options{Secrets: sec, Log: log})
	m.Warm(ctx)
	return m
}

// ListMCPTools writes, as JSON, the tools an agent of cfg's agents file
// would see from its MCP servers on behalf of tenant (needed when a
// header's secret names {tenant}): their names, descriptions and input
// schemas, and the servers that could not be reached (baton mcp ls).
// It reads the agents file and the servers' secrets only: no store.
func ListMCPTools(ctx context.Context, cfg app.Config, agent, tenant string, w io.Writer) error {
	cfg = cfg.WithDefaults()
	reg, err := app.LoadAgents(cfg.Agents)
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

// Memory builds the long-term memory service (internal/memory) with its
// embedders: the scripted one, an OpenAI-compatible endpoint on the
// deployment's OpenAI settings, and Titan Text Embeddings v2 through a
// Bedrock runtime client made on first use.
func Memory(d app.MemoryDeps) (app.MemoryService, error) {
	ec := memory.EmbedderConfig{OpenAI: d.Providers.OpenAI, Secrets: d.Secrets, Retry: d.Providers.Retry(), Log: d.Log,
		InvokeModel: bedrockrt.LazyInvokeModel(d.AWS, d.Providers.Bedrock.Region, d.Providers.Bedrock.Endpoint)}
	return memory.New(memory.Config{Store: d.Store, Models: d.Models, Agents: d.Agents, Embedders: memory.NewEmbedders(ec), Clock: d.Clock, Log: d.Log})
}
