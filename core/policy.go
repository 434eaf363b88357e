package core

import (
	"context"
	"fmt"
	"sort"
)

// ToolPolicy is an agent's (or a runtime's) tool_policy: in allow mode only
// the listed tools and categories are visible; in deny mode they are
// hidden.
type ToolPolicy struct {
	Mode       string   `json:"mode,omitempty"` // "allow" or "deny"
	Tools      []string `json:"tools,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// ActionPolicyConfig maps tools and categories to direct, preview or
// forbidden.
type ActionPolicyConfig struct {
	Tools      map[string]string `json:"tools,omitempty"`
	Categories map[string]string `json:"categories,omitempty"`
}

// PolicyConfig is the policy part of a run's configuration: the agent's
// tool and action policies plus the runtime's filters and opt-ins.
type PolicyConfig struct {
	// Mode is the runtime mode ("chat" by default) matched against a tool's
	// modes and action_policy_<mode>.
	Mode         string              `json:"mode,omitempty"`
	ToolPolicy   *ToolPolicy         `json:"tool_policy,omitempty"`
	ActionPolicy *ActionPolicyConfig `json:"action_policy,omitempty"`
	// Categories, when set, keeps only tools in these categories.
	Categories []string `json:"categories,omitempty"`
	// AllowOnly, when set, keeps only these tools.
	AllowOnly []string `json:"allow_only,omitempty"`
	// Deny hides these tools and resolves their action policy to
	// forbidden; it wins over every opt-in and over mandatory tools.
	Deny []string `json:"deny,omitempty"`
	// RuntimeTools and RuntimeCategories opt runtime (client) tools in.
	RuntimeTools      []string `json:"runtime_tools,omitempty"`
	RuntimeCategories []string `json:"runtime_categories,omitempty"`
}

// DefaultMode is the runtime mode when none is set.
const DefaultMode = "chat"

func (p PolicyConfig) mode() string {
	if p.Mode == "" {
		return DefaultMode
	}
	return p.Mode
}

// HiddenTool records why a declared tool is not visible.
type HiddenTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// isRuntimeTool reports whether a declaration is a runtime (client) tool,
// which is opt-in.
func isRuntimeTool(d ToolDeclaration) bool {
	if d.IsClient() {
		return true
	}
	b, _ := d.Runtime["runtime_tool"].(bool)
	return b
}

func declModes(d ToolDeclaration) []string {
	var out []string
	switch v := d.Extensions["modes"].(type) {
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	if s, ok := d.Extensions["mode"].(string); ok {
		out = append(out, s)
	}
	return out
}

func set(xs ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, l := range xs {
		for _, x := range l {
			m[x] = true
		}
	}
	return m
}

func inAny(cats []string, s map[string]bool) bool {
	for _, c := range cats {
		if s[c] {
			return true
		}
	}
	return false
}

// ResolveVisibleTools applies the visibility layers in order: tool-declared
// modes, the declaration's access scopes (ToolAccess), the caller's access
// checker, the agent's tool_policy, host provider fragments, runtime
// categories and allow_only, the opt-in rule for runtime tools, and
// finally the explicit deny list, which always wins (also over mandatory
// tools). Mandatory tools skip the layers between the access checker and
// the deny list. It returns the visible names in declaration order and
// the hidden ones with a reason.
func (m *Machine) ResolveVisibleTools(ctx context.Context, pc PolicyContext, tools []ToolDeclaration, p PolicyConfig) ([]string, []HiddenTool) {
	var frags []PolicyFragment
	for _, prov := range m.ToolPolicyProviders {
		frags = append(frags, safeFragment(ctx, prov, pc))
	}
	var mandatoryTools, mandatoryCats, provDeny, provDenyCats []string
	for _, f := range frags {
		mandatoryTools = append(mandatoryTools, f.MandatoryTools...)
		mandatoryCats = append(mandatoryCats, f.MandatoryCategories...)
		provDeny = append(provDeny, f.Deny...)
		provDenyCats = append(provDenyCats, f.DenyCategories...)
	}
	mandTools, mandCats := set(mandatoryTools), set(mandatoryCats)
	deny := set(p.Deny)
	var visible []string
	var hidden []HiddenTool
	for _, d := range tools {
		mandatory := mandTools[d.Name] || inAny(d.Categories, mandCats)
		reason := m.hideReason(ctx, pc, d, p, mandatory, set(provDeny), set(provDenyCats))
		if deny[d.Name] {
			reason = "denied"
		}
		if reason != "" {
			hidden = append(hidden, HiddenTool{Name: d.Name, Reason: reason})
			continue
		}
		visible = append(visible, d.Name)
	}
	return visible, hidden
}

func (m *Machine) hideReason(ctx context.Context, pc PolicyContext, d ToolDeclaration, p PolicyConfig, mandatory bool, provDeny, provDenyCats map[string]bool) string {
	if modes := declModes(d); len(modes) > 0 && !set(modes)[p.mode()] {
		return fmt.Sprintf("not available in mode %q", p.mode())
	}
	if d.Access != nil && !pc.Principal.HasScopes(d.Access.Scopes) {
		return "access_scopes"
	}
	if m.ToolAccess != nil && !safeAccess(ctx, m.ToolAccess, pc, d) {
		return "access_checker"
	}
	if mandatory {
		return ""
	}
	optedIn := false
	if tp := p.ToolPolicy; tp != nil {
		listed := set(tp.Tools)[d.Name] || inAny(d.Categories, set(tp.Categories))
		switch tp.Mode {
		case "allow":
			if !listed {
				return "tool_policy"
			}
			optedIn = true
		case "deny":
			if listed {
				return "tool_policy"
			}
		}
	}
	if provDeny[d.Name] || inAny(d.Categories, provDenyCats) {
		return "policy_provider"
	}
	if len(p.Categories) > 0 && !inAny(d.Categories, set(p.Categories)) {
		return "runtime_categories"
	}
	if len(p.AllowOnly) > 0 {
		if !set(p.AllowOnly)[d.Name] {
			return "allow_only"
		}
		optedIn = true
	}
	if isRuntimeTool(d) && !optedIn && !set(p.RuntimeTools)[d.Name] && !inAny(d.Categories, set(p.RuntimeCategories)) {
		return "runtime_tool_not_opted_in"
	}
	return ""
}

// Action policy levels, reported with the resolved policy.
const (
	LevelRuntimeDeny   = "runtime_deny"
	LevelAgentTool     = "agent_tool"
	LevelAgentCategory = "agent_category"
	LevelProvider      = "provider"
	LevelToolDefault   = "tool_default"
	LevelToolMode      = "tool_mode_default"
	LevelGlobal        = "global_default"
	LevelFilter        = "filter"
)

// ResolveActionPolicy resolves direct, preview or forbidden for a tool in
// the seed's order: the runtime deny list; the agent/runtime
// action_policy.tools; action_policy.categories (the first of the tool's
// sorted categories that is mapped); host providers in order; the tool's
// action_policy default; its action_policy_<mode> default; the global
// default direct; and finally the ActionPolicyFilter hook. It returns the
// policy and the level that decided it.
func (m *Machine) ResolveActionPolicy(ctx context.Context, pc PolicyContext, d ToolDeclaration, p PolicyConfig) (string, string) {
	policy, level := resolveActionPolicyBase(ctx, m.ActionPolicyProviders, pc, d, p)
	if m.ActionPolicyFilter != nil {
		if f := safeActionFilter(ctx, m.ActionPolicyFilter, pc, d, policy); validActionPolicy(f) && f != policy {
			return f, LevelFilter
		}
	}
	return policy, level
}

func resolveActionPolicyBase(ctx context.Context, providers []ActionPolicyProvider, pc PolicyContext, d ToolDeclaration, p PolicyConfig) (string, string) {
	if set(p.Deny)[d.Name] {
		return ActionForbidden, LevelRuntimeDeny
	}
	if ap := p.ActionPolicy; ap != nil {
		if v := ap.Tools[d.Name]; validActionPolicy(v) {
			return v, LevelAgentTool
		}
		cats := append([]string(nil), d.Categories...)
		sort.Strings(cats)
		for _, c := range cats {
			if v := ap.Categories[c]; validActionPolicy(v) {
				return v, LevelAgentCategory
			}
		}
	}
	for _, prov := range providers {
		if v := safeActionProvider(ctx, prov, pc, d); validActionPolicy(v) {
			return v, LevelProvider
		}
	}
	if validActionPolicy(d.ActionPolicy) {
		return d.ActionPolicy, LevelToolDefault
	}
	if v, _ := d.Extensions["action_policy_"+p.mode()].(string); validActionPolicy(v) {
		return v, LevelToolMode
	}
	return ActionDirect, LevelGlobal
}

func (st *RunState) isVisible(name string) bool {
	for _, v := range st.Config.Visible {
		if v == name {
			return true
		}
	}
	return false
}

func (st *RunState) visibleTools() []ToolDeclaration {
	if st.visible != nil {
		return st.visible
	}
	return st.resolveVisibleTools()
}

// resolveVisibleTools lists the visible declarations, for visibleTools
// and for the transitions that set the catalog to keep.
func (st *RunState) resolveVisibleTools() []ToolDeclaration {
	out := make([]ToolDeclaration, 0, len(st.Config.Visible))
	for _, name := range st.Config.Visible {
		if d, ok := st.Tool(name); ok {
			out = append(out, d)
		}
	}
	return out
}

func (st *RunState) policyContext() PolicyContext {
	return PolicyContext{RunID: st.RunID, Agent: st.Config.Agent, Mode: st.Config.Policy.mode(), Principal: st.Config.Principal}
}
