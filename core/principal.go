package core

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// MaxChainDepth is the default ceiling of agent-to-agent call chains.
const MaxChainDepth = 16

// Workspace identifies where a run acts.
type Workspace struct {
	Type string `json:"workspace_type"`
	ID   string `json:"workspace_id"`
}

// CallerContext carries cross-agent caller claims. A top-of-chain caller
// has CallerHost "self" and ChainDepth 0.
type CallerContext struct {
	CallerAgent string `json:"caller_agent,omitempty"`
	CallerUser  string `json:"caller_user,omitempty"`
	CallerHost  string `json:"caller_host"`
	ChainDepth  int    `json:"chain_depth"`
	ChainRoot   string `json:"chain_root,omitempty"`
}

// IsCrossSite reports whether the caller is another host.
func (c *CallerContext) IsCrossSite() bool {
	return c != nil && c.CallerHost != "" && c.CallerHost != "self"
}

// Principal is the execution principal of a run: who acts, through which
// agent, authenticated how, for which tenant and workspace, under which
// capability ceiling. It holds identifiers only, never token material or
// other secrets; its request metadata is redacted when a run starts.
type Principal struct {
	ActorID           string         `json:"actor_id,omitempty"`
	AgentID           string         `json:"agent_id,omitempty"`
	AuthSource        string         `json:"auth_source,omitempty"`
	RequestContext    string         `json:"request_context,omitempty"`
	Tenant            string         `json:"tenant,omitempty"`
	Workspace         *Workspace     `json:"workspace,omitempty"`
	TokenID           string         `json:"token_id,omitempty"`
	ClientID          string         `json:"client_id,omitempty"`
	CapabilityCeiling []string       `json:"capability_ceiling,omitempty"`
	Caller            *CallerContext `json:"caller,omitempty"`
	RequestMetadata   map[string]any `json:"request_metadata,omitempty"`
}

// Validate checks the principal's caller context.
func (p *Principal) Validate() error {
	if p == nil || p.Caller == nil {
		return nil
	}
	return p.Caller.validate(MaxChainDepth)
}

func (c *CallerContext) validate(maxDepth int) error {
	if c.ChainDepth < 0 || c.ChainDepth > maxDepth {
		return invalid("caller chain depth %d is outside 0..%d", c.ChainDepth, maxDepth)
	}
	if c.CallerHost != "" && c.CallerHost != "self" {
		u, err := url.Parse(c.CallerHost)
		if err != nil || !u.IsAbs() || u.Host == "" {
			return invalid("caller host must be \"self\" or an absolute URL, got %q", c.CallerHost)
		}
	}
	return nil
}

// Allows reports whether the capability ceiling permits cap; an empty
// ceiling permits everything.
func (p *Principal) Allows(capability string) bool {
	if p == nil || len(p.CapabilityCeiling) == 0 {
		return true
	}
	for _, c := range p.CapabilityCeiling {
		if c == capability || c == "*" {
			return true
		}
	}
	return false
}

// HasScopes reports whether the principal's capability ceiling lists
// every one of scopes. Unlike Allows, it asks for an explicit grant: an
// empty ceiling and a nil principal hold no scopes, and "*" is no
// wildcard.
func (p *Principal) HasScopes(scopes []string) bool {
	held := map[string]bool{}
	if p != nil {
		held = set(p.CapabilityCeiling)
	}
	for _, s := range scopes {
		if !held[s] {
			return false
		}
	}
	return true
}

var scopeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/\-]{0,127}$`) })

// ValidScope reports whether s is a valid scope name: 1 to 128 ASCII
// letters, digits and _ . : / -, starting with a letter or digit, such as
// "runs:write" or "crm:write". Scopes compare exactly (case-sensitive).
func ValidScope(s string) bool { return scopeRe().MatchString(s) }

func scopeSyntax(s string) string {
	return fmt.Sprintf("%q is not a valid scope name (1 to 128 letters, digits and _ . : / -, starting with a letter or digit, like \"crm:write\")", s)
}

// normalized returns a copy safe to store: request metadata redacted.
func (p *Principal) normalized() *Principal {
	if p == nil {
		return nil
	}
	cp := *p
	cp.CapabilityCeiling = append([]string(nil), p.CapabilityCeiling...)
	if p.Workspace != nil {
		w := *p.Workspace
		cp.Workspace = &w
	}
	if p.Caller != nil {
		c := *p.Caller
		cp.Caller = &c
	}
	if p.RequestMetadata != nil {
		g, err := ToJSONValue(p.RequestMetadata)
		if m, ok := g.(map[string]any); err == nil && ok {
			r, _ := Redact(m)
			cp.RequestMetadata = r.(map[string]any)
		} else {
			cp.RequestMetadata = nil
		}
	}
	return &cp
}

// SafeMetadata is the part of the principal that may appear on
// model-visible or client-visible surfaces (citations, tool payloads): no
// token ids, capability lists, caller claims or request metadata.
func (p *Principal) SafeMetadata() map[string]any {
	if p == nil {
		return nil
	}
	m := map[string]any{}
	if p.ActorID != "" {
		m["actor_id"] = p.ActorID
	}
	if p.AgentID != "" {
		m["agent_id"] = p.AgentID
	}
	if p.AuthSource != "" {
		m["auth_source"] = p.AuthSource
	}
	if p.RequestContext != "" {
		m["request_context"] = p.RequestContext
	}
	if p.Workspace != nil {
		m["workspace"] = map[string]any{"workspace_type": p.Workspace.Type, "workspace_id": p.Workspace.ID}
	}
	return m
}

// Resolver names the principal that decided an approval, for the
// approval_decided event and the call's audit record: who (tenant and
// actor id, such as a token's label), authenticated how (auth source and
// request context), with which credential (token id: a hash prefix, never
// token material) and through which client. It holds none of the
// principal's capability lists, caller claims or request metadata.
type Resolver struct {
	Tenant         string `json:"tenant,omitempty"`
	ActorID        string `json:"actor_id,omitempty"`
	AuthSource     string `json:"auth_source,omitempty"`
	RequestContext string `json:"request_context,omitempty"`
	TokenID        string `json:"token_id,omitempty"`
	ClientID       string `json:"client_id,omitempty"`
}

// Resolver returns the identifiers of p that name it as a resolver; nil
// for a nil principal.
func (p *Principal) Resolver() *Resolver {
	if p == nil {
		return nil
	}
	return &Resolver{Tenant: p.Tenant, ActorID: p.ActorID, AuthSource: p.AuthSource,
		RequestContext: p.RequestContext, TokenID: p.TokenID, ClientID: p.ClientID}
}

// data is the resolver as event data: its non-empty fields.
func (r *Resolver) data() map[string]string {
	m := map[string]string{}
	for _, f := range []struct{ k, v string }{
		{"tenant", r.Tenant}, {"actor_id", r.ActorID}, {"auth_source", r.AuthSource},
		{"request_context", r.RequestContext}, {"token_id", r.TokenID}, {"client_id", r.ClientID},
	} {
		if f.v != "" {
			m[f.k] = f.v
		}
	}
	return m
}

// Caller context header names.
const (
	HeaderCallerAgent = "X-Agents-Api-Caller-Agent"
	HeaderCallerUser  = "X-Agents-Api-Caller-User"
	HeaderCallerHost  = "X-Agents-Api-Caller-Host"
	HeaderChainDepth  = "X-Agents-Api-Chain-Depth"
	HeaderChainRoot   = "X-Agents-Api-Chain-Root"
)

// ParseCallerContext reads caller claims from request headers (looked up
// case-insensitively). No caller headers give a top-of-chain context whose
// chain root is rootID. Malformed headers are an error: callers reject the
// request (fail closed).
func ParseCallerContext(headers map[string]string, rootID string, maxDepth int) (*CallerContext, error) {
	if maxDepth <= 0 || maxDepth > MaxChainDepth {
		maxDepth = MaxChainDepth
	}
	get := func(name string) (string, bool) {
		for k, v := range headers {
			if strings.EqualFold(k, name) {
				return strings.TrimSpace(v), true
			}
		}
		return "", false
	}
	c := &CallerContext{CallerHost: "self", ChainRoot: rootID}
	if v, ok := get(HeaderCallerAgent); ok {
		c.CallerAgent = v
	}
	if v, ok := get(HeaderCallerUser); ok {
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return nil, invalid("%s must be a non-negative integer", HeaderCallerUser)
		}
		c.CallerUser = v
	}
	if v, ok := get(HeaderCallerHost); ok && v != "" {
		c.CallerHost = v
	}
	if v, ok := get(HeaderChainDepth); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, invalid("%s must be a non-negative integer", HeaderChainDepth)
		}
		c.ChainDepth = n
	}
	if v, ok := get(HeaderChainRoot); ok && v != "" {
		c.ChainRoot = v
	}
	if err := c.validate(maxDepth); err != nil {
		return nil, err
	}
	return c, nil
}

// TenantPattern is what a tenant name may be: 1 to 64 ASCII letters,
// digits, _ and -, starting with a letter or digit. A tenant name is part
// of store keys and of secret names ({tenant}), so it never holds a
// separator (/ # : .) or a control byte.
const TenantPattern = "1 to 64 letters, digits, _ and -, starting with a letter or digit"

var tenantRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`) })

// ValidTenant reports whether s is a valid tenant name (TenantPattern).
func ValidTenant(s string) bool { return tenantRe().MatchString(s) }
