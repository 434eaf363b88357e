package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/secrets"
	"github.com/baton-agents/baton/internal/toolspec"
)

// Defaults of a Manager.
const (
	DefaultTTL            = 5 * time.Minute
	DefaultRetryAfter     = 30 * time.Second
	DefaultTimeout        = 30 * time.Second
	DefaultMaxResultBytes = 1 << 20
	// MetaIdempotencyKey is the _meta key of a call's idempotency key.
	MetaIdempotencyKey = "baton/idempotency_key"
	// ErrTypeToolError: the server answered the call with isError true.
	ErrTypeToolError = "tool_error"
	// ErrTypeResponseTooLarge: the result exceeded MaxResultBytes.
	ErrTypeResponseTooLarge = "response_too_large"
	// Category is the category of every MCP tool.
	Category = "mcp"
)

// Options configures a Manager; every field is optional.
type Options struct {
	// Secrets resolves header secrets; nil means none can be resolved.
	Secrets *secrets.Resolver
	// HTTPClient is the base client of the HTTP transports (its
	// Transport is wrapped to add the headers); nil means
	// http.DefaultTransport.
	HTTPClient *http.Client
	// Transport replaces the network transport (tests: the SDK's
	// in-memory transport).
	Transport func(ctx context.Context, agent string, srv toolspec.MCPServer, tenant string) (mcp.Transport, error)
	// TTL is how long a tool list is used; RetryAfter how long a server
	// that could not be reached is left alone.
	TTL, RetryAfter time.Duration
	// MaxResultBytes caps a call's result.
	MaxResultBytes int64
	Log            *slog.Logger
	Now            func() time.Time
}

// Manager discovers and calls the tools of every agent's MCP servers. It
// is safe for concurrent use.
type Manager struct {
	o       Options
	servers map[string]map[string]*server // agent → server name
}

var (
	_ core.ToolSource   = (*Manager)(nil)
	_ core.ToolExecutor = (*Manager)(nil)
)

// New returns the Manager of servers (agent slug → its mcp_servers). It
// connects to nothing until asked (Warm, Discover, Execute).
func New(servers map[string][]toolspec.MCPServer, o Options) *Manager {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = DefaultRetryAfter
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Manager{o: o, servers: map[string]map[string]*server{}}
	for agent, list := range servers {
		m.servers[agent] = map[string]*server{}
		for _, s := range list {
			m.servers[agent][s.Name] = &server{m: m, agent: agent, spec: s, conns: map[string]*conn{}}
		}
	}
	return m
}

// Warm lists the tools of every server whose credentials do not depend
// on the tenant, in parallel, at cold start. Failures are logged; they
// never stop the process.
func (m *Manager) Warm(ctx context.Context) {
	var wg sync.WaitGroup
	for _, agent := range sortedKeys(m.servers) {
		for _, name := range sortedKeys(m.servers[agent]) {
			s := m.servers[agent][name]
			if s.spec.PerTenant() {
				continue
			}
			wg.Go(func() { _, _ = s.conn("").tools(ctx) })
		}
	}
	wg.Wait()
}

// Discover returns the tools the agent's MCP servers offer for tenant's
// runs, and the servers that cannot be reached. The servers are asked
// at once (a listing is cached, so this is I/O only when one expired).
func (m *Manager) Discover(ctx context.Context, agent, tenant string) core.ToolsDiscovered {
	names := sortedKeys(m.servers[agent])
	tools := make([][]core.ToolDeclaration, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		s := m.servers[agent][name]
		wg.Go(func() { tools[i], errs[i] = s.conn(tenant).tools(ctx) })
	}
	wg.Wait()
	var out core.ToolsDiscovered
	for i, name := range names {
		if errs[i] != nil {
			out.Unavailable = append(out.Unavailable, core.ToolSourceFailure{Source: toolspec.MCPToolPrefix + name, Error: errs[i].Error()})
			continue
		}
		out.Tools = append(out.Tools, tools[i]...)
	}
	return out
}

// Execute calls an mcp/<server>/<tool> tool.
func (m *Manager) Execute(ctx context.Context, call core.ToolCall) (any, error) {
	name, tool, ok := toolspec.SplitMCPToolName(call.ToolName)
	s := m.servers[call.Agent][name]
	if !ok || s == nil {
		return nil, fmt.Errorf("no MCP server for tool %s of agent %s", call.ToolName, call.Agent)
	}
	if !s.allowed(tool) {
		return nil, fmt.Errorf("tool %s is not in the tools of MCP server %s", tool, name)
	}
	key := call.Key()
	args := call.Parameters
	if args == nil {
		args = map[string]any{}
	}
	res, err := s.conn(call.Tenant).call(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{MetaIdempotencyKey: key}})
	if err != nil {
		return nil, err
	}
	return m.result(name, tool, res), nil
}

// server is one agent's MCP server.
type server struct {
	m     *Manager
	agent string
	spec  toolspec.MCPServer

	mu    sync.Mutex
	conns map[string]*conn // by tenant ("" when not per tenant)
}

func (s *server) allowed(tool string) bool {
	return len(s.spec.Tools) == 0 || slices.Contains(s.spec.Tools, tool)
}

func (s *server) conn(tenant string) *conn {
	if !s.spec.PerTenant() {
		tenant = ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[tenant]
	if !ok {
		c = &conn{s: s, tenant: tenant}
		s.conns[tenant] = c
	}
	return c
}

// conn is a session with a server on behalf of a tenant (or of all), and
// its tool list.
type conn struct {
	s      *server
	tenant string

	mu       sync.Mutex
	session  *mcp.ClientSession
	list     []core.ToolDeclaration
	listedAt time.Time
	stale    bool
	failedAt time.Time
	lastErr  error
}

func (c *conn) timeout() time.Duration { return c.s.spec.TimeoutOr(DefaultTimeout) }

// tools returns the cached tool list, listing again when it is older than
// the TTL or the server said it changed. A failed listing keeps a list
// already known; without one it is the error (and the server is left
// alone for RetryAfter).
func (c *conn) tools(ctx context.Context) ([]core.ToolDeclaration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.s.m.o.Now()
	fresh := c.list != nil && !c.stale && now.Sub(c.listedAt) < c.s.m.o.TTL
	if fresh {
		return c.list, nil
	}
	if c.lastErr != nil && now.Sub(c.failedAt) < c.s.m.o.RetryAfter {
		if c.list != nil {
			return c.list, nil
		}
		return nil, c.lastErr
	}
	list, err := c.listLocked(ctx)
	if err != nil {
		c.failedAt, c.lastErr = now, err
		c.s.m.o.Log.WarnContext(ctx, "MCP server unavailable", "agent", c.s.agent, "server", c.s.spec.Name, "err", err)
		if c.list != nil {
			return c.list, nil
		}
		return nil, err
	}
	c.list, c.listedAt, c.stale, c.lastErr = list, now, false, nil
	return list, nil
}

func (c *conn) listLocked(ctx context.Context) ([]core.ToolDeclaration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cs, err := c.sessionLocked(ctx)
	if err != nil {
		return nil, err
	}
	var out []core.ToolDeclaration
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			c.dropLocked(err)
			return nil, c.s.wrap("tools/list", err)
		}
		if !c.s.allowed(t.Name) {
			continue
		}
		d, err := c.s.declaration(t)
		if err != nil {
			c.s.m.o.Log.WarnContext(ctx, "MCP tool skipped", "agent", c.s.agent, "server", c.s.spec.Name, "tool", t.Name, "err", err)
			continue
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if out == nil {
		out = []core.ToolDeclaration{}
	}
	return out, nil
}

// sessionLocked returns the open session, connecting when there is none.
func (c *conn) sessionLocked(ctx context.Context) (*mcp.ClientSession, error) {
	if c.session != nil {
		return c.session, nil
	}
	t, err := c.s.transport(ctx, c.tenant)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "baton", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.mu.Lock()
			c.stale = true
			c.mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, c.s.wrap("connect", withTransportHint(c.s.spec.Transport, err))
	}
	c.session = cs
	return cs, nil
}

// dropLocked closes the session after an error that may have broken it:
// anything but the server's JSON-RPC error answer (a missing session, a
// closed connection, a timeout), so the next use reconnects.
func (c *conn) dropLocked(err error) {
	var rpc *jsonrpc.Error
	if c.session != nil && !errors.As(err, &rpc) {
		_ = c.session.Close()
		c.session = nil
	}
}

// call sends one tools/call, on a new session once more when the server
// no longer knew the session (it never saw the call).
func (c *conn) call(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	callCtx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	for attempt := 0; ; attempt++ {
		c.mu.Lock()
		cs, err := c.sessionLocked(callCtx)
		c.mu.Unlock()
		if err != nil {
			return nil, c.timedOut(ctx, callCtx, err)
		}
		res, err := cs.CallTool(callCtx, p)
		if err == nil {
			return res, nil
		}
		c.mu.Lock()
		if c.session == cs {
			c.dropLocked(err)
		}
		c.mu.Unlock()
		if errors.Is(err, mcp.ErrSessionMissing) && attempt == 0 {
			continue
		}
		return nil, c.timedOut(ctx, callCtx, c.s.wrap("tools/call "+p.Name, err))
	}
}

// timedOut names the server's timeout when it is what ended the call.
func (c *conn) timedOut(parent, callCtx context.Context, err error) error {
	if parent.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("MCP server %s timed out after %s: %w", c.s.spec.Name, c.timeout(), context.DeadlineExceeded)
	}
	return err
}

// wrap names the server (never its headers) in an error.
// transportRefusals are the HTTP status texts a server answers a client
// of the other MCP transport with (a Streamable HTTP POST to an HTTP+SSE
// server, an SSE GET to a Streamable HTTP one).
var transportRefusals = []string{"Bad Request", "Method Not Allowed", "Not Found", "Not Acceptable", "Unsupported Media Type"}

// withTransportHint adds to a connect error that looks like the server
// speaking the other transport which transport to try.
func withTransportHint(transport string, err error) error {
	msg := err.Error()
	if !slices.ContainsFunc(transportRefusals, func(r string) bool { return strings.Contains(msg, r) }) {
		return err
	}
	if transport == toolspec.MCPSSE {
		return fmt.Errorf("%w (if the server speaks Streamable HTTP, remove \"transport\": \"sse\" from it in the agents file)", err)
	}
	return fmt.Errorf("%w (if the server speaks the older HTTP+SSE transport, try \"transport\": \"sse\" for it in the agents file)", err)
}

func (s *server) wrap(op string, err error) error {
	return fmt.Errorf("MCP server %s: %s: %w", s.spec.Name, op, err)
}

// transport is the configured network transport, its requests carrying
// the server's headers resolved for tenant.
func (s *server) transport(ctx context.Context, tenant string) (mcp.Transport, error) {
	if s.m.o.Transport != nil {
		return s.m.o.Transport(ctx, s.agent, s.spec, tenant)
	}
	hdr := http.Header{}
	for _, name := range sortedKeys(s.spec.Headers) {
		h := s.spec.Headers[name]
		v := h.Value
		if v == "" {
			if s.m.o.Secrets == nil {
				return nil, fmt.Errorf("MCP server %s: headers.%s: no secret resolver", s.spec.Name, name)
			}
			b, err := s.m.o.Secrets.Resolve(ctx, h.SecretRef, tenant)
			if err != nil {
				return nil, fmt.Errorf("MCP server %s: headers.%s: %w", s.spec.Name, name, err)
			}
			v = string(b)
		}
		hdr.Set(name, h.Prefix+v)
	}
	base := http.DefaultTransport
	if s.m.o.HTTPClient != nil && s.m.o.HTTPClient.Transport != nil {
		base = s.m.o.HTTPClient.Transport
	}
	client := &http.Client{Transport: headers{base: base, h: hdr}}
	if s.spec.Transport == toolspec.MCPSSE {
		return &mcp.SSEClientTransport{Endpoint: s.spec.URL, HTTPClient: client, MaxEventSize: maxEventSize(s.m.o.MaxResultBytes)}, nil
	}
	return &mcp.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: client, MaxRetries: 2, MaxEventSize: maxEventSize(s.m.o.MaxResultBytes)}, nil
}

// maxEventSize is the transport's limit on one event: well above the
// result cap, so that an oversized result reaches Manager.result and
// fails as response_too_large rather than as a broken stream (a tools/list
// page is bounded by it too).
func maxEventSize(resultCap int64) int { return int(8*resultCap) + 1<<20 }

// headers adds the server's headers to every request.
type headers struct {
	base http.RoundTripper
	h    http.Header
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// declaration is the Baton declaration of a server's tool.
func (s *server) declaration(t *mcp.Tool) (core.ToolDeclaration, error) {
	if !toolspec.ValidMCPToolName(t.Name) {
		return core.ToolDeclaration{}, fmt.Errorf("tool name %q is not a valid MCP tool name", t.Name)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = strings.TrimSpace(t.Title)
	}
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Name, s.spec.Name)
	}
	params := map[string]any{"type": "object"}
	if t.InputSchema != nil {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return core.ToolDeclaration{}, err
		}
		var p map[string]any
		if err := json.Unmarshal(b, &p); err != nil {
			return core.ToolDeclaration{}, fmt.Errorf("inputSchema is not a JSON object")
		}
		params = p
	}
	raw := map[string]any{
		"name": toolspec.MCPToolName(s.spec.Name, t.Name), "source": s.spec.Name, "description": desc,
		"parameters": params, "categories": []any{Category},
	}
	if o, ok := s.spec.ToolOverrides[t.Name]; ok {
		if o.ActionPolicy != "" {
			raw["action_policy"] = o.ActionPolicy
		}
		if o.Runtime != nil {
			raw["runtime"] = o.Runtime
		}
	}
	g, err := core.ToJSONValue(raw)
	if err != nil {
		return core.ToolDeclaration{}, err
	}
	return core.NormalizeServerTool(g)
}

// result maps a tools/call result to a Baton result envelope.
func (m *Manager) result(server, tool string, res *mcp.CallToolResult) map[string]any {
	b, err := json.Marshal(res)
	if err != nil {
		return failed(ErrTypeResponseTooLarge, fmt.Sprintf("MCP server %s returned a result for %s that is not JSON: %v", server, tool, err))
	}
	if int64(len(b)) > m.o.MaxResultBytes {
		return failed(ErrTypeResponseTooLarge, fmt.Sprintf("MCP server %s returned a result for %s larger than the %d-byte limit", server, tool, m.o.MaxResultBytes))
	}
	if res.IsError {
		msg := contentText(res.Content)
		if msg == "" {
			msg = fmt.Sprintf("MCP tool %s of server %s reported an error", tool, server)
		}
		return failed(ErrTypeToolError, msg)
	}
	if res.StructuredContent != nil {
		v, err := core.ToJSONValue(res.StructuredContent)
		if err == nil {
			return map[string]any{"success": true, "result": v}
		}
	}
	return map[string]any{"success": true, "result": contentValue(res.Content)}
}

func failed(errType, msg string) map[string]any {
	return map[string]any{"success": false, "error": msg, "error_type": errType}
}

// contentText joins the text content of a result.
func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// contentValue is the result value of unstructured content: one text
// holding a JSON object or array is that value; texts only are joined;
// anything else is the list of content objects.
func contentValue(cs []mcp.Content) any {
	texts := true
	for _, c := range cs {
		if _, ok := c.(*mcp.TextContent); !ok {
			texts = false
		}
	}
	if texts {
		s := contentText(cs)
		if t := strings.TrimSpace(s); len(cs) == 1 && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) {
			if v, err := decodeJSON(t); err == nil {
				return v
			}
		}
		return s
	}
	out := make([]any, 0, len(cs))
	for _, c := range cs {
		b, err := json.Marshal(c)
		if err != nil {
			continue
		}
		if v, err := decodeJSON(string(b)); err == nil {
			out = append(out, v)
		}
	}
	return out
}

func decodeJSON(s string) (any, error) {
	var v any
	err := core.DecodeJSON([]byte(s), &v)
	return v, err
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
