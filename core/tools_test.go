package core

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNormalizeClientTool(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]any
		wantErr string
	}{
		{name: "valid", in: map[string]any{"name": "client/search_docs", "description": "Search.", "parameters": map[string]any{"required": []any{"query"}}, "executor": "client", "scope": "run"}},
		{name: "no namespace", in: map[string]any{"name": "openclawp__get-recent-posts", "description": "x"}, wantErr: "client/<slug>"},
		{name: "other namespace", in: map[string]any{"name": "openclawp/get-recent-posts", "description": "x"}, wantErr: "client/<slug>"},
		{name: "source mismatch", in: map[string]any{"name": "client/a", "source": "openclawp", "description": "x"}, wantErr: `source "openclawp" must match`},
		{name: "host executor", in: map[string]any{"name": "client/a", "executor": "host", "description": "x"}, wantErr: `must be "client"`},
		{name: "scope", in: map[string]any{"name": "client/a", "scope": "global", "description": "x"}, wantErr: `scope must be "run"`},
		{name: "no description", in: map[string]any{"name": "client/a"}, wantErr: "description is required"},
		{name: "parameters not object", in: map[string]any{"name": "client/a", "description": "x", "parameters": []any{"q"}}, wantErr: "parameters must be a JSON Schema object"},
		{name: "bad schema", in: map[string]any{"name": "client/a", "description": "x", "parameters": map[string]any{"type": "banana"}}, wantErr: "not a valid JSON Schema"},
		{name: "remote ref", in: map[string]any{"name": "client/a", "description": "x", "parameters": map[string]any{"$ref": "https://example.com/s.json"}}, wantErr: "not a valid JSON Schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NormalizeClientTool(tc.in)
			if wantedErr(t, err, tc.wantErr) {
				return
			}
			if d.Source != "client" || d.Executor != "client" || d.Scope != "run" || !d.IsClient() {
				t.Fatalf("defaults not applied: %+v", d)
			}
		})
	}
}

func TestNormalizeServerTool(t *testing.T) {
	d, err := NormalizeServerTool(map[string]any{
		"name": "ability/search_posts", "source": "abilities", "description": "Search posts.",
		"executor":                map[string]any{"type": "http", "url": "http://127.0.0.1:9/x"},
		"runtime":                 map[string]any{"duplicate_policy": "repeatable", "retry_safe": true, "api_key": "k", "nested": map[string]any{"Cookie": "c", "ok": num("1")}, "fn": nil},
		"parameter_defaults":      map[string]any{"limit": num("10"), "auth_token": "t"},
		"client_context_bindings": []any{"site_id"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Executor != ExecutorHost || d.Scope != ScopeRun || len(d.Parameters) != 0 {
		t.Fatalf("defaults: %+v", d)
	}
	if !d.Repeatable() || !d.RetrySafe() {
		t.Fatalf("runtime flags lost: %v", d.Runtime)
	}
	got := mustCanon(t, d)
	for _, want := range []string{`"api_key":"[redacted]"`, `"Cookie":"[redacted]"`, `"auth_token":"[redacted]"`, `"limit":10`, `"client_context_bindings":["site_id"]`} {
		if !strings.Contains(got, want) {
			t.Errorf("%s missing from %s", want, got)
		}
	}
	if strings.Contains(got, `"fn"`) || strings.Contains(got, "127.0.0.1") {
		t.Errorf("unsupported runtime value or executor config kept: %s", got)
	}
	var back ToolDeclaration
	if err := back.UnmarshalJSON([]byte(got)); err != nil {
		t.Fatal(err)
	}
	if mustCanon(t, back) != got {
		t.Fatalf("declaration JSON round trip differs")
	}

	bad := []struct {
		in      map[string]any
		wantErr string
	}{
		{map[string]any{"name": "search", "source": "s", "description": "x"}, "must be namespaced"},
		{map[string]any{"name": "ability/x", "description": "x"}, "source is required"},
		{map[string]any{"name": "ability/x", "source": "s"}, "description is required"},
		{map[string]any{"name": "ability/x", "source": "s", "description": "x", "executor": "client"}, `executor "client" is only valid`},
		{map[string]any{"name": "ability/x", "source": "client", "description": "x"}, `source "client" is only valid`},
		{map[string]any{"name": "ability/x", "source": "s", "description": "x", "action_policy": "maybe"}, "action_policy must be"},
		{map[string]any{"name": "client/x", "source": "s", "description": "x"}, "must match"},
	}
	for _, b := range bad {
		if _, err := NormalizeServerTool(b.in); err == nil || !strings.Contains(err.Error(), b.wantErr) {
			t.Errorf("%v: err = %v, want %q", b.in, err, b.wantErr)
		}
	}
}

func TestNormalizeRequestTools(t *testing.T) {
	acc, rej := NormalizeRequestTools([]any{
		map[string]any{"name": "client/legacy"},
		map[string]any{"name": "ability/x", "source": "abilities", "description": "d"},
		map[string]any{"name": "client/legacy", "description": "dup"},
		"nope",
		map[string]any{"name": "bad name", "description": "d"},
	})
	if len(acc) != 2 || acc[0].Description != "Client tool legacy" || acc[0].Source != "client" {
		t.Fatalf("accepted = %+v", acc)
	}
	if len(rej) != 3 {
		t.Fatalf("rejected = %+v", rej)
	}
	for _, r := range rej {
		if !strings.HasPrefix(r.Reason, RequestToolPrefix+": ") {
			t.Errorf("reason %q lacks the request prefix", r.Reason)
		}
	}
}

func TestRedactAndCanonical(t *testing.T) {
	in := map[string]any{"b": num("1.50"), "a": map[string]any{"X-Api-Key": "k", "list": []any{map[string]any{"password": "p", "ok": "<&>"}}}, "nonce": "n"}
	red, did := Redact(in)
	if !did {
		t.Fatal("nothing redacted")
	}
	got := mustCanon(t, red)
	want := `{"a":{"X-Api-Key":"[redacted]","list":[{"ok":"<&>","password":"[redacted]"}]},"b":1.50,"nonce":"[redacted]"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if in["nonce"] != "n" {
		t.Fatal("Redact changed its input")
	}
	for k, want := range map[string]bool{"Authorization": true, "session_id": true, "client_secret": true, "query": false, "tokenizer_name": true, "author": false} {
		if IsSensitiveKey(k) != want {
			t.Errorf("IsSensitiveKey(%q) = %v", k, !want)
		}
	}
}

func TestNormalizeToolOutput(t *testing.T) {
	decl := ToolDeclaration{Name: "a/b", Runtime: map[string]any{"environment": "control_plane", "completion_signal": "progress"}}
	tests := []struct {
		name string
		out  any
		want string
	}{
		{"bare value wrapped", []any{"x"}, `{"result":["x"],"runtime":{"completion_signal":"progress","environment":"control_plane"},"success":true,"tool_name":"a/b"}`},
		{"envelope merges runtime", map[string]any{"success": true, "result": "ok", "runtime": map[string]any{"environment": "runtime_local"}}, `{"result":"ok","runtime":{"completion_signal":"progress","environment":"runtime_local"},"success":true,"tool_name":"a/b"}`},
		{"failure defaults", map[string]any{"success": false}, `{"error":"The tool reported a failure","error_type":"tool_error","runtime":{"completion_signal":"progress","environment":"control_plane"},"success":false,"tool_name":"a/b"}`},
		{"success without success key object", map[string]any{"success_rate": 1}, `{"result":{"success_rate":1},"runtime":{"completion_signal":"progress","environment":"control_plane"},"success":true,"tool_name":"a/b"}`},
		{"not json", func() {}, `{"error":"Tool execution failed: the executor returned a value that is not JSON: json: unsupported type: func()","error_type":"executor_exception","runtime":{"completion_signal":"progress","environment":"control_plane"},"success":false,"tool_name":"a/b"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustCanon(t, NormalizeToolOutput(decl, tc.out, nil)); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestNormalizeToolAccess(t *testing.T) {
	base := func(access any) map[string]any {
		return map[string]any{"name": "crm/update_contact", "source": "crm", "description": "Update a contact.", "access": access}
	}
	d, err := NormalizeServerTool(base(map[string]any{"scopes": []any{"crm:write", "crm:read"}}))
	if err != nil {
		t.Fatal(err)
	}
	if d.Access == nil || strings.Join(d.Access.Scopes, " ") != "crm:write crm:read" || d.Extensions["access"] != nil {
		t.Fatalf("access = %+v, extensions %v", d.Access, d.Extensions)
	}
	got := mustCanon(t, d)
	if !strings.Contains(got, `"access":{"scopes":["crm:write","crm:read"]}`) {
		t.Fatalf("access not serialized: %s", got)
	}
	var back ToolDeclaration
	if err := back.UnmarshalJSON([]byte(got)); err != nil || mustCanon(t, back) != got {
		t.Fatalf("round trip: %v %s", err, mustCanon(t, back))
	}
	bad := []struct {
		access        any
		field, reason string
	}{
		{"crm:write", "access", "access must be an object"},
		{map[string]any{}, "access.scopes", "access.scopes must be an array"},
		{map[string]any{"scopes": "crm:write"}, "access.scopes", "access.scopes must be an array"},
		{map[string]any{"scopes": []any{}}, "access.scopes", "at least one scope"},
		{map[string]any{"scopes": []any{7}}, "access.scopes", "access.scopes[0] must be a string"},
		{map[string]any{"scopes": []any{"crm write"}}, "access.scopes", `access.scopes[0]: "crm write" is not a valid scope name`},
		{map[string]any{"scopes": []any{"*"}}, "access.scopes", "not a valid scope name"},
		{map[string]any{"scopes": []any{"crm:write", "crm:write"}}, "access.scopes", "access.scopes[1]: scope \"crm:write\" is listed twice"},
		{map[string]any{"scopes": []any{"crm:write"}, "claims": map[string]any{"team": "sales"}}, "access.claims", "access.claims: unknown field"},
	}
	for _, b := range bad {
		_, err := NormalizeServerTool(base(b.access))
		var de *DeclarationError
		if !errors.As(err, &de) || !strings.Contains(de.Reason, b.reason) || strings.Join(de.Fields, ",") != b.field {
			t.Errorf("access %v: err = %v, want field %s and %q", b.access, err, b.field, b.reason)
		}
	}
	// A Go caller's declaration is checked when the run starts.
	cfg := RunConfig{Model: ModelSpec{Provider: ProviderScripted}, Tools: []ToolDeclaration{{Name: "crm/x", Access: &ToolAccess{}}}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `tool "crm/x": access.scopes must list at least one scope`) {
		t.Fatalf("Validate = %v", err)
	}
}

func TestPrincipalHasScopes(t *testing.T) {
	p := &Principal{CapabilityCeiling: []string{"runs:write", "crm:write"}}
	tests := []struct {
		p      *Principal
		scopes []string
		want   bool
	}{
		{p, []string{"crm:write"}, true},
		{p, []string{"crm:write", "runs:write"}, true},
		{p, []string{"crm:write", "crm:read"}, false},
		{p, []string{"CRM:write"}, false},
		{&Principal{}, []string{"crm:write"}, false},
		{&Principal{CapabilityCeiling: []string{"*"}}, []string{"crm:write"}, false},
		{nil, []string{"crm:write"}, false},
		{nil, nil, true},
	}
	for _, tc := range tests {
		if got := tc.p.HasScopes(tc.scopes); got != tc.want {
			t.Errorf("%v HasScopes(%v) = %v, want %v", tc.p, tc.scopes, got, tc.want)
		}
	}
}

// TestToolDeclarationJSON: a declaration writes its canonical fields and
// its extensions in one object, and leaves out the optional fields it
// does not set (an empty runtime, parameter defaults or categories
// included).
func TestToolDeclarationJSON(t *testing.T) {
	cases := []struct {
		name string
		d    ToolDeclaration
		want string
	}{
		{"bare", ToolDeclaration{Name: "crm/find", Source: "crm", Executor: "http"},
			`{"description":"","executor":"http","name":"crm/find","parameters":{},"scope":"","source":"crm"}`},
		{"empty optional fields", ToolDeclaration{Name: "crm/find", Runtime: map[string]any{}, ParameterDefaults: map[string]any{}, Categories: []string{}},
			`{"description":"","executor":"","name":"crm/find","parameters":{},"scope":"","source":""}`},
		{"every field", ToolDeclaration{Name: "crm/find", Source: "crm", Description: "Find", Parameters: map[string]any{"type": "object"}, Executor: "http",
			Scope: "crm:read", Runtime: map[string]any{"timeout": "5s"}, ParameterDefaults: map[string]any{"limit": 5}, ActionPolicy: "approve",
			Categories: []string{"search"}, Extensions: map[string]any{"x-team": "crm"}},
			`{"action_policy":"approve","categories":["search"],"description":"Find","executor":"http","name":"crm/find","parameter_defaults":{"limit":5},"parameters":{"type":"object"},"runtime":{"timeout":"5s"},"scope":"crm:read","source":"crm","x-team":"crm"}`},
	}
	for _, tc := range cases {
		b, err := json.Marshal(tc.d)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %s, %v\nwant %s", tc.name, b, err, tc.want)
		}
	}
}

// TestDeclarationErrorAndObjects: a declaration error names the tool
// when it has one; a declaration given as a Go value is read as the JSON
// object it encodes, and one that encodes no object is refused.
func TestDeclarationErrorAndObjects(t *testing.T) {
	if got := declError("crm/find", "scope", "bad scope %q", "x").Error(); got != `invalid tool declaration "crm/find": bad scope "x"` {
		t.Errorf("named: %s", got)
	}
	if got := declError("", "name", "no name").Error(); got != "invalid tool declaration: no name" {
		t.Errorf("unnamed: %s", got)
	}
	m, err := asObject(struct {
		Name string `json:"name"`
	}{"crm/find"})
	if err != nil || m["name"] != "crm/find" {
		t.Errorf("a struct: %v, %v", m, err)
	}
	for _, raw := range []any{make(chan int), []any{"x"}, "crm/find"} {
		if m, err := asObject(raw); err == nil {
			t.Errorf("%T read as %v", raw, m)
		}
	}
}
