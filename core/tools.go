package core

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Executor kinds of a normalized declaration. Concrete server execution
// (http, lambda, go) is configured outside core; core only distinguishes
// calls the host executes from calls a client answers.
const (
	ExecutorHost   = "host"
	ExecutorClient = "client"
	ScopeRun       = "run"
	SourceClient   = "client"
)

// Runtime metadata keys with a meaning to the loop.
const (
	RuntimeDuplicatePolicy  = "duplicate_policy"
	RuntimeRetrySafe        = "retry_safe"
	RuntimeCompletionSignal = "completion_signal"
	DuplicateRepeatable     = "repeatable"
)

// ToolDeclaration is a normalized tool declaration. Fields outside the
// canonical envelope are kept in Extensions and serialized at the top
// level, so policy fields travel with the declaration.
type ToolDeclaration struct {
	Name              string
	Source            string
	Description       string
	Parameters        map[string]any
	Executor          string
	Scope             string
	Runtime           map[string]any
	ParameterDefaults map[string]any
	ActionPolicy      string
	Categories        []string
	// Access, when set, limits the tool to runs whose execution
	// principal holds its scopes; see ToolAccess.
	Access     *ToolAccess
	Extensions map[string]any
	// compiled, when set (by Machine.Start, for the runs it creates),
	// holds Parameters compiled once; copies of the declaration share it.
	// Declarations read from a store have none and use the process's
	// cache of schemas by their canonical JSON.
	compiled *compiledSchema
}

// ToolAccess is a declaration's access requirement ("access" in JSON).
// The tool is visible to the model, and so callable, only in runs whose
// execution principal holds every scope in Scopes (Principal.HasScopes);
// otherwise it is hidden like a tool the access checker refuses, and a
// call to it by name gets a failed tool_not_found result. A run without
// a principal holds no scopes.
type ToolAccess struct {
	Scopes []string `json:"scopes"`
}

// toolAccessKeys are the fields an access block may hold.
var toolAccessKeys = map[string]bool{"scopes": true}

// validate checks an access requirement: at least one scope, each a
// valid scope name, none twice.
func (a *ToolAccess) validate() error {
	if a == nil {
		return nil
	}
	if len(a.Scopes) == 0 {
		return fmt.Errorf("access.scopes must list at least one scope")
	}
	seen := map[string]bool{}
	for i, sc := range a.Scopes {
		if !ValidScope(sc) {
			return fmt.Errorf("access.scopes[%d]: %s", i, scopeSyntax(sc))
		}
		if seen[sc] {
			return fmt.Errorf("access.scopes[%d]: scope %q is listed twice", i, sc)
		}
		seen[sc] = true
	}
	return nil
}

var canonicalToolKeys = map[string]bool{
	"name": true, "source": true, "description": true, "parameters": true,
	"executor": true, "scope": true, "runtime": true, "parameter_defaults": true,
	"action_policy": true, "categories": true, "access": true,
}

// IsClient reports whether a client answers calls to the tool.
func (d ToolDeclaration) IsClient() bool { return d.Executor == ExecutorClient }

// Repeatable reports whether identical calls may execute more than once.
func (d ToolDeclaration) Repeatable() bool {
	s, _ := d.Runtime[RuntimeDuplicatePolicy].(string)
	return s == DuplicateRepeatable
}

// RetrySafe reports whether a call whose outcome is unknown after a crash
// may be executed again with the same idempotency key.
func (d ToolDeclaration) RetrySafe() bool {
	b, _ := d.Runtime[RuntimeRetrySafe].(bool)
	return b
}

// Namespace returns the part of the name before the first '/'.
func (d ToolDeclaration) Namespace() string {
	ns, _, _ := strings.Cut(d.Name, "/")
	return ns
}

// MarshalJSON writes the canonical fields and the extension fields in one
// object.
func (d ToolDeclaration) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(d.Extensions)+10)
	for k, v := range d.Extensions {
		m[k] = v
	}
	m["name"] = d.Name
	m["source"] = d.Source
	m["description"] = d.Description
	params := d.Parameters
	if params == nil {
		params = map[string]any{}
	}
	m["parameters"] = params
	m["executor"] = d.Executor
	m["scope"] = d.Scope
	if len(d.Runtime) > 0 {
		m["runtime"] = d.Runtime
	}
	if len(d.ParameterDefaults) > 0 {
		m["parameter_defaults"] = d.ParameterDefaults
	}
	if d.ActionPolicy != "" {
		m["action_policy"] = d.ActionPolicy
	}
	if len(d.Categories) > 0 {
		m["categories"] = d.Categories
	}
	if d.Access != nil {
		m["access"] = d.Access
	}
	return marshalNoEscape(m)
}

// UnmarshalJSON reads a declaration that was already normalized (state
// round trips). Use NormalizeServerTool or NormalizeClientTool for input.
func (d *ToolDeclaration) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := decodeJSON(b, &m); err != nil {
		return err
	}
	out := ToolDeclaration{}
	out.Name, _ = m["name"].(string)
	out.Source, _ = m["source"].(string)
	out.Description, _ = m["description"].(string)
	out.Parameters, _ = m["parameters"].(map[string]any)
	out.Executor, _ = m["executor"].(string)
	out.Scope, _ = m["scope"].(string)
	out.Runtime, _ = m["runtime"].(map[string]any)
	out.ParameterDefaults, _ = m["parameter_defaults"].(map[string]any)
	out.ActionPolicy, _ = m["action_policy"].(string)
	if cs, ok := m["categories"].([]any); ok {
		for _, c := range cs {
			if s, ok := c.(string); ok {
				out.Categories = append(out.Categories, s)
			}
		}
	}
	if a, ok := m["access"].(map[string]any); ok {
		out.Access = &ToolAccess{Scopes: []string{}}
		if ss, ok := a["scopes"].([]any); ok {
			for _, x := range ss {
				if s, ok := x.(string); ok {
					out.Access.Scopes = append(out.Access.Scopes, s)
				}
			}
		}
	}
	for k, v := range m {
		if !canonicalToolKeys[k] {
			if out.Extensions == nil {
				out.Extensions = map[string]any{}
			}
			out.Extensions[k] = v
		}
	}
	*d = out
	return nil
}

// DeclarationError names the invalid fields of a rejected declaration.
type DeclarationError struct {
	Name   string
	Fields []string
	Reason string
}

func (e *DeclarationError) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("invalid tool declaration %q: %s", e.Name, e.Reason)
	}
	return "invalid tool declaration: " + e.Reason
}

var (
	clientNameRe = regexp.MustCompile(`^client/[a-z0-9][a-z0-9_\-]*$`)
	serverNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_\-]*/[A-Za-z0-9][A-Za-z0-9_\-/.]*$`)
	slugRe       = regexp.MustCompile(`^[a-z0-9][a-z0-9_\-]*$`)
)

func declError(name, field, format string, args ...any) *DeclarationError {
	return &DeclarationError{Name: name, Fields: []string{field}, Reason: fmt.Sprintf(format, args...)}
}

func asObject(raw any) (map[string]any, error) {
	switch t := raw.(type) {
	case map[string]any:
		return cloneObject(t), nil
	case ToolDeclaration:
		b, err := t.MarshalJSON()
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, decodeJSON(b, &m)
	}
	g, err := ToJSONValue(raw)
	if err != nil {
		return nil, err
	}
	m, ok := g.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("declaration must be an object, got %s", jsonKind(g))
	}
	return m, nil
}

func optString(m map[string]any, key string) (string, bool, error) {
	v, present := m[key]
	if !present || v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", true, fmt.Errorf("%s must be a string, got %s", key, jsonKind(v))
	}
	return strings.TrimSpace(s), true, nil
}

// NormalizeClientTool applies the strict client runtime contract: the name
// is client/<slug>, source (when given) is "client", executor (when given)
// is "client", scope (when given) is "run", description is required and
// parameters, when present, is a valid JSON Schema object.
func NormalizeClientTool(raw any) (ToolDeclaration, error) {
	m, err := asObject(raw)
	if err != nil {
		return ToolDeclaration{}, &DeclarationError{Reason: err.Error(), Fields: []string{"declaration"}}
	}
	return normalizeClient(m)
}

func normalizeClient(m map[string]any) (ToolDeclaration, error) {
	name, _, err := optString(m, "name")
	if err != nil {
		return ToolDeclaration{}, declError("", "name", "%v", err)
	}
	if name == "" {
		return ToolDeclaration{}, declError("", "name", "name is required")
	}
	if !clientNameRe.MatchString(name) {
		return ToolDeclaration{}, declError(name, "name", "client tool names must be client/<slug> (lowercase letters, digits, '_' or '-')")
	}
	d := ToolDeclaration{Name: name, Source: SourceClient, Executor: ExecutorClient, Scope: ScopeRun}
	if s, present, err := optString(m, "source"); err != nil {
		return ToolDeclaration{}, declError(name, "source", "%v", err)
	} else if present && s != SourceClient {
		return ToolDeclaration{}, declError(name, "source", "source %q must match the name's namespace \"client\"", s)
	}
	if s, present, err := optString(m, "executor"); err != nil {
		return ToolDeclaration{}, declError(name, "executor", "%v", err)
	} else if present && s != ExecutorClient {
		return ToolDeclaration{}, declError(name, "executor", "executor of a client tool must be \"client\", got %q", s)
	}
	if err := common(&d, m); err != nil {
		return ToolDeclaration{}, err
	}
	return d, nil
}

// common normalizes the fields shared by client and server declarations.
func common(d *ToolDeclaration, m map[string]any) error {
	if s, present, err := optString(m, "scope"); err != nil {
		return declError(d.Name, "scope", "%v", err)
	} else if present && s != ScopeRun {
		return declError(d.Name, "scope", "scope must be \"run\", got %q", s)
	}
	desc, _, err := optString(m, "description")
	if err != nil {
		return declError(d.Name, "description", "%v", err)
	}
	if desc == "" {
		return declError(d.Name, "description", "description is required")
	}
	d.Description = desc
	if p, present := m["parameters"]; !present || p == nil {
		d.Parameters = map[string]any{}
	} else {
		pm, ok := p.(map[string]any)
		if !ok {
			return declError(d.Name, "parameters", "parameters must be a JSON Schema object, got %s", jsonKind(p))
		}
		if err := checkSchema(pm); err != nil {
			return declError(d.Name, "parameters", "parameters is not a valid JSON Schema: %v", err)
		}
		d.Parameters = pm
	}
	if r, present := m["runtime"]; present && r != nil {
		rm, ok := r.(map[string]any)
		if !ok {
			return declError(d.Name, "runtime", "runtime must be an object, got %s", jsonKind(r))
		}
		d.Runtime = SanitizeRuntimeMetadata(rm)
	}
	if pd, present := m["parameter_defaults"]; present && pd != nil {
		pdm, ok := pd.(map[string]any)
		if !ok {
			return declError(d.Name, "parameter_defaults", "parameter_defaults must be an object, got %s", jsonKind(pd))
		}
		red, _ := Redact(pdm)
		d.ParameterDefaults = red.(map[string]any)
	}
	if s, present, err := optString(m, "action_policy"); err != nil {
		return declError(d.Name, "action_policy", "%v", err)
	} else if present {
		if !validActionPolicy(s) {
			return declError(d.Name, "action_policy", "action_policy must be direct, preview or forbidden, got %q", s)
		}
		d.ActionPolicy = s
	}
	if c, present := m["categories"]; present && c != nil {
		arr, ok := c.([]any)
		if !ok {
			return declError(d.Name, "categories", "categories must be an array of strings")
		}
		for _, x := range arr {
			s, ok := x.(string)
			if !ok || !slugRe.MatchString(s) {
				return declError(d.Name, "categories", "categories must be lowercase slugs, got %v", x)
			}
			d.Categories = append(d.Categories, s)
		}
		sort.Strings(d.Categories)
	}
	if a, present := m["access"]; present && a != nil {
		acc, field, err := parseToolAccess(a)
		if err != nil {
			return declError(d.Name, field, "%v", err)
		}
		d.Access = acc
	}
	for k, v := range m {
		if canonicalToolKeys[k] {
			continue
		}
		if d.Extensions == nil {
			d.Extensions = map[string]any{}
		}
		d.Extensions[k] = cloneJSON(v)
	}
	return nil
}

// parseToolAccess reads an access block, returning the field a
// misconfiguration is in.
func parseToolAccess(v any) (*ToolAccess, string, error) {
	am, ok := v.(map[string]any)
	if !ok {
		return nil, "access", fmt.Errorf("access must be an object like {\"scopes\": [\"crm:write\"]}, got %s", jsonKind(v))
	}
	for _, k := range sortedKeys(am) {
		if !toolAccessKeys[k] {
			return nil, "access." + k, fmt.Errorf("access.%s: unknown field (an access block holds scopes)", k)
		}
	}
	arr, ok := am["scopes"].([]any)
	if !ok {
		return nil, "access.scopes", fmt.Errorf("access.scopes must be an array of scope names, got %s", jsonKind(am["scopes"]))
	}
	acc := &ToolAccess{Scopes: make([]string, 0, len(arr))}
	for i, x := range arr {
		s, ok := x.(string)
		if !ok {
			return nil, "access.scopes", fmt.Errorf("access.scopes[%d] must be a string, got %s", i, jsonKind(x))
		}
		acc.Scopes = append(acc.Scopes, s)
	}
	if err := acc.validate(); err != nil {
		return nil, "access.scopes", err
	}
	return acc, "", nil
}

// NormalizeServerTool applies the canonical server declaration contract:
// a namespaced name, a source slug, a required description, an optional
// parameter schema (empty when missing), executor defaulting to host (any
// non-client label canonicalizes to host), scope run, runtime metadata
// sanitized and sensitive parameter_defaults redacted. client/* names are
// validated by the strict client contract instead.
func NormalizeServerTool(raw any) (ToolDeclaration, error) {
	m, err := asObject(raw)
	if err != nil {
		return ToolDeclaration{}, &DeclarationError{Reason: err.Error(), Fields: []string{"declaration"}}
	}
	name, _, err := optString(m, "name")
	if err != nil {
		return ToolDeclaration{}, declError("", "name", "%v", err)
	}
	if strings.HasPrefix(name, "client/") {
		return normalizeClient(m)
	}
	if name == "" {
		return ToolDeclaration{}, declError("", "name", "name is required")
	}
	if !serverNameRe.MatchString(name) {
		return ToolDeclaration{}, declError(name, "name", "server tool names must be namespaced, like ability/search_posts")
	}
	d := ToolDeclaration{Name: name, Executor: ExecutorHost, Scope: ScopeRun}
	src, _, err := optString(m, "source")
	if err != nil {
		return ToolDeclaration{}, declError(name, "source", "%v", err)
	}
	if src == "" {
		return ToolDeclaration{}, declError(name, "source", "source is required")
	}
	if !slugRe.MatchString(src) {
		return ToolDeclaration{}, declError(name, "source", "source must be a lowercase slug, got %q", src)
	}
	if src == SourceClient {
		return ToolDeclaration{}, declError(name, "source", "source \"client\" is only valid for client/* tools")
	}
	d.Source = src
	switch ex := m["executor"].(type) {
	case nil:
	case string:
		if strings.TrimSpace(ex) == ExecutorClient {
			return ToolDeclaration{}, declError(name, "executor", "executor \"client\" is only valid for client/* tools")
		}
	case map[string]any:
		// A concrete executor configuration (http, lambda, go) is the
		// host's business; it canonicalizes to host.
		if t, _ := ex["type"].(string); t == ExecutorClient {
			return ToolDeclaration{}, declError(name, "executor", "executor \"client\" is only valid for client/* tools")
		}
	default:
		return ToolDeclaration{}, declError(name, "executor", "executor must be a string or an object")
	}
	if err := common(&d, m); err != nil {
		return ToolDeclaration{}, err
	}
	delete(d.Extensions, "executor")
	return d, nil
}

// RejectedDeclaration records a declaration dropped during request
// normalization.
type RejectedDeclaration struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// RequestToolPrefix is the error prefix of request-level declaration
// failures.
const RequestToolPrefix = "invalid_conversation_tool_declaration"

// NormalizeRequestTools normalizes the tool catalog of a conversation
// request. client/* entries get the compatibility defaults (source and
// executor client, scope run, empty parameters, a description derived from
// the name) before strict validation; other entries go through the server
// normalizer. Invalid entries are dropped and reported; duplicate names
// keep the first entry.
func NormalizeRequestTools(raw []any) ([]ToolDeclaration, []RejectedDeclaration) {
	var accepted []ToolDeclaration
	var rejected []RejectedDeclaration
	seen := map[string]bool{}
	for i, r := range raw {
		m, err := asObject(r)
		if err != nil {
			rejected = append(rejected, RejectedDeclaration{Name: fmt.Sprintf("#%d", i), Reason: RequestToolPrefix + ": " + err.Error()})
			continue
		}
		name, _ := m["name"].(string)
		var d ToolDeclaration
		if strings.HasPrefix(name, "client/") {
			setDefault(m, "source", SourceClient)
			setDefault(m, "executor", ExecutorClient)
			setDefault(m, "scope", ScopeRun)
			if s, _ := m["description"].(string); strings.TrimSpace(s) == "" {
				m["description"] = "Client tool " + strings.TrimPrefix(name, "client/")
			}
			d, err = normalizeClient(m)
		} else {
			d, err = NormalizeServerTool(m)
		}
		if err != nil {
			label := name
			if label == "" {
				label = fmt.Sprintf("#%d", i)
			}
			rejected = append(rejected, RejectedDeclaration{Name: label, Reason: RequestToolPrefix + ": " + reasonOf(err)})
			continue
		}
		if seen[d.Name] {
			rejected = append(rejected, RejectedDeclaration{Name: d.Name, Reason: RequestToolPrefix + ": duplicate tool name"})
			continue
		}
		seen[d.Name] = true
		accepted = append(accepted, d)
	}
	return accepted, rejected
}

func reasonOf(err error) string {
	if de, ok := err.(*DeclarationError); ok {
		return de.Reason
	}
	return err.Error()
}

func setDefault(m map[string]any, k string, v any) {
	if cur, ok := m[k]; !ok || cur == nil || cur == "" {
		m[k] = v
	}
}

// SanitizeRuntimeMetadata keeps JSON-friendly values with string keys
// (scalars, nested objects and arrays), drops nulls and redacts sensitive
// keys.
func SanitizeRuntimeMetadata(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if strings.TrimSpace(k) == "" {
			continue
		}
		if IsSensitiveKey(k) {
			out[k] = RedactedValue
			continue
		}
		if sv, ok := sanitizeValue(v); ok {
			out[k] = sv
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func sanitizeValue(v any) (any, bool) {
	switch t := v.(type) {
	case string, bool, json.Number:
		return t, true
	case float64, int, int64:
		return t, true
	case map[string]any:
		s := SanitizeRuntimeMetadata(t)
		if s == nil {
			s = map[string]any{}
		}
		return s, true
	case []any:
		out := make([]any, 0, len(t))
		for _, x := range t {
			if sx, ok := sanitizeValue(x); ok {
				out = append(out, sx)
			}
		}
		return out, true
	default:
		return nil, false
	}
}

// Action policies.
const (
	ActionDirect    = "direct"
	ActionPreview   = "preview"
	ActionForbidden = "forbidden"
)

func validActionPolicy(s string) bool {
	return s == ActionDirect || s == ActionPreview || s == ActionForbidden
}
