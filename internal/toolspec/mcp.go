package toolspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
)

// MCP transports.
const (
	// MCPStreamable is the Streamable HTTP transport (the default).
	MCPStreamable = "streamable_http"
	// MCPSSE is the older HTTP+SSE transport (2024-11-05 servers).
	MCPSSE = "sse"
)

// MCPServer is one entry of an agent's mcp_servers: a remote MCP server
// whose tools the agent uses as mcp/<name>/<tool>.
type MCPServer struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Transport is streamable_http (default) or sse.
	Transport string `json:"transport,omitempty"`
	// Headers are sent with every request; their values are secrets (or
	// literal values), never taken from a caller.
	Headers map[string]MCPHeader `json:"headers,omitempty"`
	// Tools is the allow-list of the server's tool names; empty means all.
	Tools []string `json:"tools,omitempty"`
	// ToolOverrides sets the action policy and runtime metadata of a tool
	// by its MCP name.
	ToolOverrides map[string]MCPToolOverride `json:"tool_overrides,omitempty"`
	// Timeout bounds one call (and one discovery); default 30s.
	Timeout string `json:"timeout,omitempty"`
}

// MCPHeader is a header value: a secret reference (which may contain
// {tenant}) or a literal Value, with an optional Prefix ("Bearer ").
type MCPHeader struct {
	SecretRef
	Value  string `json:"value,omitempty"`
	Prefix string `json:"prefix,omitempty"`
}

// MCPToolOverride is what an operator sets on one MCP tool.
type MCPToolOverride struct {
	ActionPolicy string         `json:"action_policy,omitempty"`
	Runtime      map[string]any `json:"runtime,omitempty"`
}

// MCPToolPrefix starts the name of every MCP tool: mcp/<server>/<tool>.
const MCPToolPrefix = "mcp/"

var (
	mcpServerNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_\-]{0,31}$`) })
	// mcpToolNameRe is the MCP spec's tool name alphabet.
	mcpToolNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,128}$`) })
	headerNameRe  = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")
)

// ValidMCPToolName reports whether name is a valid MCP tool name.
func ValidMCPToolName(name string) bool { return mcpToolNameRe().MatchString(name) }

// MCPToolName is the Baton name of a server's tool.
func MCPToolName(server, tool string) string { return MCPToolPrefix + server + "/" + tool }

// SplitMCPToolName returns the server and tool of an mcp/<server>/<tool>
// name.
func SplitMCPToolName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, MCPToolPrefix)
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "/")
	return server, tool, ok && server != "" && tool != ""
}

// ParseMCPServers reads and validates an agent's mcp_servers. Unknown
// fields are errors.
func ParseMCPServers(raw []any) ([]MCPServer, error) {
	out := make([]MCPServer, 0, len(raw))
	seen := map[string]bool{}
	for i, v := range raw {
		b, _ := json.Marshal(v)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var s MCPServer
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("mcp_servers[%d]: %w", i, err)
		}
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("mcp_servers[%d] (%s): %w", i, s.Name, err)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("mcp_servers[%d]: duplicate server name %q", i, s.Name)
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	return out, nil
}

func (s *MCPServer) validate() error {
	if !mcpServerNameRe().MatchString(s.Name) {
		return fmt.Errorf("name must be a lowercase slug of at most 32 characters (letters, digits, '_', '-'), got %q", s.Name)
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url must be an http(s) URL with a host")
	}
	if u.User != nil {
		return fmt.Errorf("url must not carry credentials: put them in headers as secrets")
	}
	switch s.Transport {
	case "":
		s.Transport = MCPStreamable
	case MCPStreamable, MCPSSE:
	default:
		return fmt.Errorf("transport must be %s or %s, got %q", MCPStreamable, MCPSSE, s.Transport)
	}
	for _, name := range sortedNames(s.Headers) {
		h := s.Headers[name]
		if !headerNameRe.MatchString(name) {
			return fmt.Errorf("headers: %q is not a valid header name", name)
		}
		hasRef := h.Env != "" || h.SSM != "" || h.ARN != ""
		switch {
		case hasRef && h.Value != "":
			return fmt.Errorf("headers.%s: set a secret (secret_env, secret_ssm or secret_arn) or a value, not both", name)
		case hasRef:
			if err := h.SecretRef.Validate(); err != nil {
				return fmt.Errorf("headers.%s: %w", name, err)
			}
		case h.Value == "":
			return fmt.Errorf("headers.%s: set secret_env, secret_ssm, secret_arn or value", name)
		case strings.Contains(h.Value, TenantPlaceholder):
			return fmt.Errorf("headers.%s: {tenant} is only resolved in secret references", name)
		case strings.EqualFold(name, "Authorization"):
			return fmt.Errorf("headers.Authorization: a credential must come from a secret (secret_env, secret_ssm or secret_arn), not a literal value")
		}
	}
	listed := map[string]bool{}
	for _, t := range s.Tools {
		if !ValidMCPToolName(t) {
			return fmt.Errorf("tools: %q is not a valid MCP tool name", t)
		}
		if listed[t] {
			return fmt.Errorf("tools: %q is listed twice", t)
		}
		listed[t] = true
	}
	for _, name := range sortedNames(s.ToolOverrides) {
		o := s.ToolOverrides[name]
		if len(s.Tools) > 0 && !listed[name] {
			return fmt.Errorf("tool_overrides.%s: the tool is not in tools, so the agent never sees it", name)
		}
		if !ValidMCPToolName(name) {
			return fmt.Errorf("tool_overrides: %q is not a valid MCP tool name", name)
		}
		switch o.ActionPolicy {
		case "", "direct", "preview", "forbidden":
		default:
			return fmt.Errorf("tool_overrides.%s.action_policy must be direct, preview or forbidden, got %q", name, o.ActionPolicy)
		}
		if o.Runtime != nil {
			g, err := core.ToJSONValue(o.Runtime)
			if err != nil {
				return fmt.Errorf("tool_overrides.%s.runtime: %w", name, err)
			}
			o.Runtime = core.SanitizeRuntimeMetadata(g.(map[string]any))
			s.ToolOverrides[name] = o
		}
	}
	if s.Timeout != "" {
		if d, err := time.ParseDuration(s.Timeout); err != nil || d <= 0 {
			return fmt.Errorf("timeout: want a positive Go duration like \"30s\", got %q", s.Timeout)
		}
	}
	return nil
}

// PerTenant reports whether a header's secret depends on the run's tenant.
func (s MCPServer) PerTenant() bool {
	for _, h := range s.Headers {
		if h.SecretRef.PerTenant() {
			return true
		}
	}
	return false
}

// TimeoutOr is the server's timeout, def when unset.
func (s MCPServer) TimeoutOr(def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s.Timeout); err == nil && d > 0 {
		return d
	}
	return def
}

func sortedNames[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
