package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-agents/baton/internal/app"
)

// envelope is the part of the result envelope (core.Envelope) the demo
// test reads; the mains import no module package but internal/app.
type envelope struct {
	Status          string            `json:"status"`
	Completed       bool              `json:"completed"`
	TurnCount       int               `json:"turn_count"`
	ToolAuditEvents []json.RawMessage `json:"tool_audit_events"`
	Events          []struct {
		Type string `json:"type"`
	} `json:"events"`
}

func TestDemoRunsToCompletion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"demo", "-quiet"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var env envelope
	if err := json.Unmarshal(out.Bytes(), &env); err != nil {
		t.Fatalf("output is not an envelope: %v\n%s", err, out.String())
	}
	if env.Status != "completed" || !env.Completed || env.TurnCount != 4 || len(env.ToolAuditEvents) != 3 {
		t.Fatalf("status %s completed %v turns %d audits %d", env.Status, env.Completed, env.TurnCount, len(env.ToolAuditEvents))
	}
	for _, want := range []string{"runtime_tool_pending", "approval_required", "approval_decided"} {
		found := false
		for _, ev := range env.Events {
			found = found || ev.Type == want
		}
		if !found {
			t.Errorf("event %s missing", want)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"nope"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown command") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

// TestDevRejectsBadAccessBlock: baton dev refuses to start on an agents
// file whose tool has a misconfigured access block, naming the agent, the
// tool and the field.
func TestDevRejectsBadAccessBlock(t *testing.T) {
	for _, tc := range []struct{ access, want string }{
		{`{"scopes":"crm:write"}`, `agents.json:2:106: agents[0].tools[0].access.scopes: got string, want array`},
		{`{"scopes":[]}`, `agents.json:1:67: agents[0].tools[0]: invalid tool declaration "crm/update_contact": access.scopes must list at least one scope`},
		{`{"roles":["admin"]}`, `agents.json:2:97: agents[0].tools[0].access.roles: unknown field "roles"`},
	} {
		path := filepath.Join(t.TempDir(), "agents.json")
		file := `{"agents":[{"slug":"crm","model":{"provider":"scripted"},"tools":[{"name":"crm/update_contact","source":"crm","description":"Update.",
		  "executor":{"type":"http","url":"http://127.0.0.1:9/x","secret_env":"CRM_SECRET"},"access":` + tc.access + `}]}]}`
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"dev", "--agents", path, "--addr", "127.0.0.1:0"}, &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), tc.want) || strings.Contains(out.String(), "ready") {
			t.Errorf("access %s: exit %d, stderr %q, want %q", tc.access, code, errOut.String(), tc.want)
		}
	}
}

func TestParseDevTokens(t *testing.T) {
	got, err := parseDevTokens("acme=tok-acme-123+crm:write+crm:read, globex=tok-globex-456")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Tenant != "acme" || got[0].Token != "tok-acme-123" || got[1].Token != "tok-globex-456" {
		t.Fatalf("tokens %+v", got)
	}
	if s := strings.Join(got[0].Scopes, " "); s != "runs:write runs:read results:submit approvals:decide memories:read memories:delete schedules:read schedules:write memories:subject crm:write crm:read" {
		t.Errorf("acme scopes %s", s)
	}
	if s := strings.Join(got[1].Scopes, " "); s != "runs:write runs:read results:submit approvals:decide memories:read memories:delete schedules:read schedules:write memories:subject" {
		t.Errorf("globex scopes %s", s)
	}
	for _, bad := range []string{"acme", "acme=short", "=tok-acme-123", "acme=tok-acme-123+crm write", "acme=tok-acme-123+runs:all", "x/../acme=tok-acme-123", "acme#RUN#x=tok-acme-123"} {
		if _, err := parseDevTokens(bad); err == nil || !strings.Contains(err.Error(), "BATON_DEV_TOKENS") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}

func TestDevCORSOrigins(t *testing.T) {
	o, err := parseDevFlags([]string{"--cors-origins", "http://localhost:5173, https://app.example.com"}, io.Discard)
	if err != nil || len(o.cfg.CORSOrigins) != 2 || o.cfg.CORSOrigins[0] != "http://localhost:5173" {
		t.Fatalf("%v %v", o.cfg.CORSOrigins, err)
	}
}

// TestAgentsValidate: baton agents validate exits 0 with an ok line on
// the shipped agents files, 1 with every problem on a broken one, 2 on
// bad usage.
func TestAgentsValidate(t *testing.T) {
	for _, f := range []string{"agents.demo.json", "../../tests/testdata/agents.json"} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"agents", "validate", f}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), f+": ok (") {
			t.Errorf("%s: exit %d, %q %q", f, code, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	broken := "../../internal/agents/testdata/broken-agents.json"
	if code := run(context.Background(), []string{"agents", "validate", broken}, &out, &errOut); code != 1 || strings.Count(out.String(), "\n") != 10 || !strings.Contains(out.String(), broken+":7:20: agents[0].max_turns: got string, want integer\n") {
		t.Errorf("broken: exit %d, %q %q", code, out.String(), errOut.String())
	}
	// A bundle's own Go handler, named with --go-handlers, is one this
	// build provides.
	out.Reset()
	custom := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(custom, []byte(`{"agents":[{"slug":"a","model":{"provider":"scripted"},"tools":[{"name":"a/b","source":"a","description":"B.","executor":{"type":"go","handler":"lookup"}}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := run(context.Background(), []string{"agents", "validate", custom}, &out, &errOut); code != 1 || !strings.Contains(out.String(), `:1:145: agents[0].tools[0].executor.handler: no Go handler named "lookup" is registered in this build (it has echo)`) {
		t.Errorf("unknown handler: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"agents", "validate", "--go-handlers", "lookup,charge", custom}, &out, &errOut); code != 0 || out.String() != custom+": ok (1 agent: a)\n" {
		t.Errorf("--go-handlers: exit %d, %q", code, out.String())
	}
	if code := run(context.Background(), []string{"agents", "validate"}, &out, &errOut); code != 2 {
		t.Errorf("no file: exit %d", code)
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"agents", "validate", "nope.json"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "nope.json") {
		t.Errorf("a missing file: exit %d, %q", code, errOut.String())
	}
}

// TestSixProblemsInOnePass: baton agents validate prints every problem
// of a file with six different ones — two the schema finds (an unknown
// field, an executor type), a misspelt provider, an unknown Go handler,
// a handoff to no agent, a loader rule — in one run, each with its line
// and column and, for a misspelt name, the nearest valid one; baton dev
// refuses the file with the same six and names the command.
func TestSixProblemsInOnePass(t *testing.T) {
	f := "../../internal/agents/testdata/six-problems.json"
	want := []string{
		f + `:5:29: agents[0].model.provider: unknown provider "scriptd" (this build has scripted, openai, anthropic, bedrock); did you mean "scripted"?`,
		f + `:6:7: agents[0].max_turn: unknown field "max_turn"; did you mean "max_turns"?`,
		f + `:7:20: agents[0].handoffs[0]: "biling" is not an agent of this file (it has support, billing); did you mean "billing"?`,
		f + `:10:48: agents[0].tools[0].executor.handler: no Go handler named "ecko" is registered in this build (it has echo); did you mean "echo"?`,
		f + `:12:31: agents[0].tools[1].executor.type: value must be one of 'http', 'lambda', 'go', 'agent', 'a2a'; did you mean "http"?`,
		f + `:18:77: agents[1].compaction.recent_messages: compaction.recent_messages (9) must be below compaction.max_messages (4)`,
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"agents", "validate", f}, &out, &errOut); code != 1 || out.String() != strings.Join(want, "\n")+"\n" {
		t.Fatalf("exit %d:\n%s\nwant:\n%s", code, out.String(), strings.Join(want, "\n"))
	}
	out.Reset()
	code := run(context.Background(), []string{"dev", "--agents", f, "--addr", "127.0.0.1:0"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "6 problems (baton agents validate "+f+" lists them too)\n  "+strings.Join(want, "\n  ")+"\n") {
		t.Fatalf("baton dev: exit %d, stderr:\n%s", code, errOut.String())
	}
}

func TestDevJWTFlags(t *testing.T) {
	o, err := parseDevFlags([]string{"--jwt-issuer", "https://idp.example.com", "--jwt-audience", "api", "--jwks-file", "keys.json",
		"--jwt-tenant-claim", "custom:tenant", "--jwt-scope-map", "baton/user=runs:read+runs:write, admin=approvals:decide"}, io.Discard)
	j := o.cfg.JWT
	if err != nil || j.Issuer != "https://idp.example.com" || j.Audience != "api" || j.JWKSFile != "keys.json" || j.TenantClaim != "custom:tenant" ||
		strings.Join(j.ScopeMap["baton/user"], " ") != "runs:read runs:write" || strings.Join(j.ScopeMap["admin"], " ") != "approvals:decide" {
		t.Fatalf("%+v %v", j, err)
	}
	for args, want := range map[string]string{
		"--jwt-audience api":                          "--jwt-issuer is required",
		"--jwt-issuer https://i --jwt-scope-map nope": "--jwt-scope-map",
	} {
		if _, err := parseDevFlags(strings.Fields(args), io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", args, err, want)
		}
	}
}

func TestDevLimitFlags(t *testing.T) {
	o, err := parseDevFlags([]string{"--tenant-rate", "5/s", "--tenant-burst", "10", "--caller-rate", "120/m", "--tenant-max-active", "3"}, io.Discard)
	l := o.cfg.Limits
	if err != nil || l.TenantRate.Rate != 5 || l.TenantRate.Burst != 10 || l.CallerRate.Rate != 2 || l.CallerRate.Burst != 2 || l.MaxActiveRuns != 3 {
		t.Fatalf("%+v %v", l, err)
	}
	for args, want := range map[string]string{
		"--tenant-rate fast":       "--tenant-rate: want requests a second",
		"--tenant-rate 5/week":     "--tenant-rate: want requests a second",
		"--tenant-rate -1":         "--tenant-rate: want requests a second",
		"--tenant-burst 0":         "--tenant-burst: want a whole number",
		"--caller-burst 1.5":       "--caller-burst: want a whole number",
		"--tenant-max-active -2":   "--tenant-max-active: want a whole number",
		"--tenant-max-active many": "--tenant-max-active: want a whole number",
	} {
		if _, err := parseDevFlags(strings.Fields(args), io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", args, err, want)
		}
	}
}

// TestBanner: baton dev's banner gives every tenant's token (not only
// the first's), says which tenant the export line is for, and names the
// JWT issuer and the browsers' origins it accepts.
func TestBanner(t *testing.T) {
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true}, Providers: []string{app.ProviderScripted},
		Agents: app.Agents{JSON: `{"agents":[{"slug":"a","model":{"provider":"scripted"}}]}`}, CORSOrigins: []string{"http://localhost:5173"}},
		app.Deps{LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	a.Config.JWT.Issuer, a.Config.JWT.Audience = "https://idp.example.com", "api"
	var out bytes.Buffer
	banner(&out, a, "http://127.0.0.1:8080", []app.Token{{Tenant: "acme", Token: "tok-acme-123"}, {Tenant: "globex", Token: "tok-globex-456"}}, "")
	for _, want := range []string{
		"baton dev: token for tenant acme: tok-acme-123\n",
		"baton dev: token for tenant globex: tok-globex-456\n",
		"(agent a, tenant acme)",
		"export BATON_URL=http://127.0.0.1:8080 BATON_TOKEN=tok-acme-123",
		"baton dev: JWTs of issuer https://idp.example.com are accepted too (audience api",
		"baton dev: browsers on http://localhost:5173 may call the API (CORS)\n",
		"baton dev: ready\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the banner does not say %q:\n%s", want, out.String())
		}
	}
}
