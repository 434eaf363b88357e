package agents

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", `{"agents":[]}`, "no agents defined"},
		{"unknown field", `{"agents":[{"slug":"a","model":{"provider":"scripted"},"colour":1}]}`, `unknown field "colour"`},
		{"no slug", `{"agents":[{"model":{"provider":"scripted"}}]}`, "slug is required"},
		{"no provider", `{"agents":[{"slug":"a","model":{}}]}`, "model.provider is required"},
		{"duplicate", `{"agents":[{"slug":"a","model":{"provider":"x"}},{"slug":"a","model":{"provider":"x"}}]}`, `duplicate slug "a"`},
		{"bad override", `{"agents":[{"slug":"a","model":{"provider":"x"},"allow_overrides":["system"]}]}`, `"system" cannot be overridden`},
		{"bad ttl", `{"agents":[{"slug":"a","model":{"provider":"x"},"pending_ttl":"soon"}]}`, "pending_ttl"},
		{"bad budget", `{"agents":[{"slug":"a","model":{"provider":"x"},"budgets":{"dollars":1}}]}`, "unknown budget"},
		{"client tool", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"client/x","description":"d"}]}]}`, "declared by API callers"},
		{"bad tool", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"nons","source":"s","description":"d","executor":{"type":"go","handler":"h"}}]}]}`, "namespaced"},
		{"no executor", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"a/b","source":"s","description":"d"}]}]}`, "executor must be an object"},
		{"bad executor type", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"a/b","source":"s","description":"d","executor":{"type":"ftp"}}]}]}`, "executor.type"},
		{"http without url", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"a/b","source":"s","description":"d","executor":{"type":"http"}}]}]}`, "executor.url"},
		{"executor unknown field", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"a/b","source":"s","description":"d","executor":{"type":"go","handler":"h","secret":"x"}}]}]}`, `unknown field "secret"`},
		{"trailing", `{"agents":[{"slug":"a","model":{"provider":"x"}}]} {}`, "unexpected data"},
		{"access not an object", `{"agents":[{"slug":"crm","model":{"provider":"x"},"tools":[{"name":"crm/w","source":"s","description":"d","executor":{"type":"go","handler":"h"},"access":["crm:write"]}]}]}`,
			`agents[0] (crm): tools[0]: invalid tool declaration "crm/w": access must be an object`},
		{"access without scopes", `{"agents":[{"slug":"crm","model":{"provider":"x"},"tools":[{"name":"crm/w","source":"s","description":"d","executor":{"type":"go","handler":"h"},"access":{"scope":"crm:write"}}]}]}`,
			`agents[0] (crm): tools[0]: invalid tool declaration "crm/w": access.scope: unknown field`},
		{"access bad scope", `{"agents":[{"slug":"crm","model":{"provider":"x"},"tools":[{"name":"crm/w","source":"s","description":"d","executor":{"type":"go","handler":"h"},"access":{"scopes":["crm write"]}}]}]}`,
			`agents[0] (crm): tools[0]: invalid tool declaration "crm/w": access.scopes[0]: "crm write" is not a valid scope name`},
		{"compaction without threshold", `{"agents":[{"slug":"a","model":{"provider":"x"},"compaction":{"enabled":true}}]}`, "agents[0] (a): invalid input: compaction.max_messages must be at least 2"},
		{"compaction recent not below max", `{"agents":[{"slug":"a","model":{"provider":"x"},"compaction":{"enabled":true,"max_messages":4,"recent_messages":9}}]}`, "compaction.recent_messages (9) must be below compaction.max_messages (4)"},
		{"compaction model without provider", `{"agents":[{"slug":"a","model":{"provider":"x"},"compaction":{"enabled":true,"max_messages":4,"model":{"model":"m"}}}]}`, "agents[0] (a): invalid input: compaction.model.provider is required"},
		{"stream_tokens with output guardrails", `{"agents":[{"slug":"a","model":{"provider":"x"},"stream_tokens":true,"guardrails":{"output":[{"type":"regex","pattern":"x","action":"redact"}]}}]}`, "stream_tokens: true cannot go with output guardrails"},
		{"agent tool of no agent", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"agent/b","description":"d","executor":{"type":"agent","agent":"b"}}]}]}`, `tool agent/b: executor.agent "b" is not an agent of this file`},
		{"agent tool name", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"ask/a","description":"d","executor":{"type":"agent","agent":"a"}}]}]}`, "an agent tool's name starts with agent/"},
		{"agent executor without agent", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"agent/a","description":"d","executor":{"type":"agent"}}]}]}`, "executor.agent (an agent's slug) is required"},
		{"agent executor with a url", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"agent/a","description":"d","executor":{"type":"agent","agent":"a","url":"http://x"}}]}]}`, "takes only type and agent"},
		{"output_schema not an object", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"agent/a","description":"d","executor":{"type":"agent","agent":"a"},"output_schema":true}]}]}`, "output_schema must be a JSON Schema object"},
		{"output_schema on a go tool", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"a/b","source":"s","description":"d","executor":{"type":"go","handler":"h"},"output_schema":{"type":"object"}}]}]}`, "output_schema is for agent tools"},
		{"handoff to no agent", `{"agents":[{"slug":"a","model":{"provider":"x"},"handoffs":["b"]}]}`, `handoffs[0]: "b" is not an agent of this file`},
		{"handoff to itself", `{"agents":[{"slug":"a","model":{"provider":"x"},"handoffs":["a"]}]}`, "cannot hand off to itself"},
		{"handoff twice", `{"agents":[{"slug":"a","model":{"provider":"x"},"handoffs":["b","b"]},{"slug":"b","model":{"provider":"x"}}]}`, `handoffs[1]: "b" is listed twice`},
		{"handoff tool declared", `{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"handoff/b","source":"s","description":"d","executor":{"type":"go","handler":"h"}}]}]}`, "handoff/ names are the tools of handoffs"},
		{"compaction unknown field", `{"agents":[{"slug":"a","model":{"provider":"x"},"compaction":{"enabled":true,"max_messages":4,"model":{"provider":"x","url":"http://x"}}}]}`, `unknown field "url"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestOverrides(t *testing.T) {
	r, err := Parse([]byte(`{"agents":[{"slug":"a","model":{"provider":"scripted"},"allow_overrides":["budgets","max_turns"],"budgets":{"tool_calls":5,"turns":3},"pending_ttl":"2h",
	  "tools":[{"name":"a/b","source":"s","description":"d","executor":{"type":"go","handler":"echo"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := r.Get("a")
	if !ok || a.PendingTTL.Hours() != 2 || len(a.Tools) != 1 || a.Executors["a/b"].Handler != "echo" {
		t.Fatalf("agent %+v", a)
	}
	n := 4
	cfg, err := a.RunConfig(Overrides{MaxTurns: &n, Budgets: map[string]float64{"tool_calls": 2}})
	if err != nil || cfg.MaxTurns != 4 || cfg.Budgets["tool_calls"] != 2 || cfg.Budgets["turns"] != 3 {
		t.Fatalf("cfg %+v %v", cfg, err)
	}
	// The agent's own budgets are not changed by a request.
	cfg2, _ := a.RunConfig(Overrides{})
	if cfg2.Budgets["tool_calls"] != 5 {
		t.Fatalf("request override leaked into the agent: %v", cfg2.Budgets)
	}
	p := true
	_, err = a.RunConfig(Overrides{ParallelToolCalls: &p})
	var oe *OverrideError
	if !errors.As(err, &oe) || oe.Field != OverrideParallelToolCalls {
		t.Fatalf("err = %v", err)
	}
	if _, err := a.RunConfig(Overrides{Budgets: map[string]float64{"tool_calls": 0}}); err == nil {
		t.Fatal("zero budget accepted")
	}
}

func TestStreamTokens(t *testing.T) {
	r, err := Parse([]byte(`{"agents":[
		{"slug":"on","model":{"provider":"scripted"}},
		{"slug":"off","model":{"provider":"scripted"},"stream_tokens":false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	on, _ := r.Get("on")
	off, _ := r.Get("off")
	yes, no := true, false
	for _, tc := range []struct {
		agent    *Agent
		o        *bool
		noStream bool
		refused  bool
	}{
		{on, nil, false, false}, {on, &no, true, false}, {on, &yes, false, false},
		{off, nil, true, false}, {off, &no, true, false}, {off, &yes, true, true},
	} {
		cfg, err := tc.agent.RunConfig(Overrides{StreamTokens: tc.o})
		var oe *OverrideError
		if refused := errors.As(err, &oe) && oe.Field == OverrideStreamTokens; refused != tc.refused || (!tc.refused && err != nil) {
			t.Fatalf("%s, stream_tokens %v: err %v", tc.agent.Spec.Slug, tc.o, err)
		}
		if !tc.refused && cfg.NoTokenStream != tc.noStream {
			t.Fatalf("%s, stream_tokens %v: NoTokenStream %v", tc.agent.Spec.Slug, tc.o, cfg.NoTokenStream)
		}
		// A refusal says what is true, not to allow an override that
		// allow_overrides cannot hold.
		if tc.refused && (strings.Contains(err.Error(), "allow_overrides") || !strings.Contains(err.Error(), "may turn streaming off, never on")) {
			t.Fatalf("refusal %q", err)
		}
	}
	_, err = on.RunConfig(Overrides{MaxTurns: new(int)})
	if err == nil || !strings.Contains(err.Error(), `add "max_turns" to the agent's allow_overrides`) {
		t.Fatalf("an override the file can allow: %v", err)
	}
}

func TestToolAccess(t *testing.T) {
	r, err := Parse([]byte(`{"agents":[{"slug":"crm","model":{"provider":"scripted"},
	  "tools":[{"name":"crm/update","source":"crm","description":"d","executor":{"type":"go","handler":"echo"},"access":{"scopes":["crm:write"]}},
	           {"name":"crm/find","source":"crm","description":"d","executor":{"type":"go","handler":"echo"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Get("crm")
	cfg, err := a.RunConfig(Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if acc := cfg.Tools[0].Access; acc == nil || len(acc.Scopes) != 1 || acc.Scopes[0] != "crm:write" || cfg.Tools[1].Access != nil {
		t.Fatalf("tools %+v", cfg.Tools)
	}
}

func TestCheckCompactionModels(t *testing.T) {
	r, err := Parse([]byte(`{"agents":[
		{"slug":"own","model":{"provider":"openai","model":"gpt-4o"},"compaction":{"enabled":true,"max_messages":20}},
		{"slug":"cheap","model":{"provider":"openai","model":"gpt-4o"},"compaction":{"enabled":true,"max_messages":20,"model":{"provider":"anthropic"},"prompt":"Be short."}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		enabled []string
		want    string
	}{
		{[]string{"openai"}, `agent cheap: compaction.model.provider "anthropic" is not enabled in this deployment (enabled: openai)`},
		{[]string{"openai", "anthropic"}, "agent cheap: compaction.model.model is required: provider anthropic needs a model id"},
	} {
		if err := r.CheckCompactionModels(tc.enabled); err == nil || err.Error() != tc.want {
			t.Errorf("enabled %v: err = %v, want %q", tc.enabled, err, tc.want)
		}
	}
	ok, _ := Parse([]byte(`{"agents":[{"slug":"a","model":{"provider":"scripted"},"compaction":{"enabled":true,"max_messages":20,"model":{"provider":"scripted"}}}]}`))
	if err := ok.CheckCompactionModels([]string{"scripted"}); err != nil {
		t.Fatal(err)
	}
	a, _ := r.Get("cheap")
	cfg, err := a.RunConfig(Overrides{})
	if err != nil || cfg.Compaction.Model.Provider != "anthropic" || cfg.Compaction.Prompt != "Be short." {
		t.Fatalf("run config compaction %+v, %v", cfg.Compaction, err)
	}
}

// TestHooks: pre_tool_mediator and completion_policy are http or lambda
// hooks with on_error; a bad one fails the load naming agent and field.
func TestHooks(t *testing.T) {
	r, err := Parse([]byte(`{"agents":[{"slug":"a","model":{"provider":"scripted"},
	  "pre_tool_mediator":{"type":"http","url":"http://127.0.0.1:9/m","secret_env":"S","timeout":"2s","on_error":"proceed"},
	  "completion_policy":{"type":"lambda","function":"arn:aws:lambda:us-east-1:123456789012:function:done"}},
	  {"slug":"b","model":{"provider":"scripted"},"pre_tool_mediator":{"type":"lambda","function":"m"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Get("a")
	if a.Mediator == nil || a.Mediator.URL != "http://127.0.0.1:9/m" || a.Mediator.OnError != "proceed" || a.Mediator.Timeout != "2s" {
		t.Fatalf("mediator %+v", a.Mediator)
	}
	if a.Completion == nil || a.Completion.Function == "" || a.Completion.OnError != "continue" {
		t.Fatalf("completion %+v", a.Completion)
	}
	if b, _ := r.Get("b"); b.Mediator == nil || b.Mediator.OnError != "reject" || b.Completion != nil {
		t.Fatalf("b %+v %+v", b.Mediator, b.Completion)
	}

	for _, tc := range []struct{ name, hook, want string }{
		{"not an object", `"pre_tool_mediator":"http://x"`, "agents[0] (a): pre_tool_mediator: must be an object"},
		{"go type", `"pre_tool_mediator":{"type":"go","handler":"echo"}`, "agents[0] (a): pre_tool_mediator: executor.type must be http or lambda for a hook"},
		{"no url", `"completion_policy":{"type":"http","secret_env":"S"}`, "agents[0] (a): completion_policy: executor.url"},
		{"bad on_error", `"pre_tool_mediator":{"type":"lambda","function":"f","on_error":"complete"}`, "agents[0] (a): pre_tool_mediator: on_error must be reject or proceed"},
		{"completion on_error", `"completion_policy":{"type":"lambda","function":"f","on_error":"reject"}`, "agents[0] (a): completion_policy: on_error must be continue"},
		{"unknown field", `"pre_tool_mediator":{"type":"lambda","function":"f","retries":2}`, `agents[0] (a): pre_tool_mediator: executor: json: unknown field "retries"`},
		{"bad timeout", `"completion_policy":{"type":"lambda","function":"f","timeout":"soon"}`, "agents[0] (a): completion_policy: executor.timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(`{"agents":[{"slug":"a","model":{"provider":"scripted"},` + tc.hook + `}]}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// mcp_servers are validated: names, URLs, secrets (never a literal
// Authorization), the allow-list and the overrides; mcp/ names are not
// declarable as tools.
func TestMCPServers(t *testing.T) {
	agent := func(servers string, tools string) string {
		return `{"agents":[{"slug":"a","model":{"provider":"scripted"},"mcp_servers":` + servers + `,"tools":` + tools + `}]}`
	}
	ok := `[{"name":"crm","url":"https://crm.example/mcp","headers":{"Authorization":{"secret_ssm":"/baton/{tenant}/crm","prefix":"Bearer "},"X-Api-Version":{"value":"2"}},
		"tools":["get","delete"],"tool_overrides":{"delete":{"action_policy":"preview","runtime":{"retry_safe":true}}},"timeout":"10s"}]`
	r, err := Parse([]byte(agent(ok, `[]`)))
	if err != nil {
		t.Fatal(err)
	}
	srv := r.MCPServers()["a"]
	if len(srv) != 1 || !srv[0].PerTenant() || srv[0].Transport != "streamable_http" || srv[0].ToolOverrides["delete"].ActionPolicy != "preview" {
		t.Fatalf("%+v", srv)
	}
	for name, c := range map[string]struct{ servers, tools, want string }{
		"bad name":               {`[{"name":"CRM","url":"https://x/mcp"}]`, `[]`, "lowercase slug"},
		"bad url":                {`[{"name":"crm","url":"ftp://x/mcp"}]`, `[]`, "http(s) URL"},
		"credentials in the url": {`[{"name":"crm","url":"https://u:p@x/mcp"}]`, `[]`, "must not carry credentials"},
		"duplicate":              {`[{"name":"crm","url":"https://x/mcp"},{"name":"crm","url":"https://y/mcp"}]`, `[]`, "duplicate server name"},
		"literal authorization":  {`[{"name":"crm","url":"https://x/mcp","headers":{"Authorization":{"value":"Bearer t"}}}]`, `[]`, "must come from a secret"},
		"two secret sources":     {`[{"name":"crm","url":"https://x/mcp","headers":{"Authorization":{"secret_env":"A","secret_ssm":"/b"}}}]`, `[]`, "only one"},
		"override not allowed":   {`[{"name":"crm","url":"https://x/mcp","tools":["get"],"tool_overrides":{"delete":{"action_policy":"preview"}}}]`, `[]`, "not in tools"},
		"bad action policy":      {`[{"name":"crm","url":"https://x/mcp","tool_overrides":{"get":{"action_policy":"ask"}}}]`, `[]`, "direct, preview or forbidden"},
		"bad timeout":            {`[{"name":"crm","url":"https://x/mcp","timeout":"soon"}]`, `[]`, "timeout"},
		"unknown field":          {`[{"name":"crm","url":"https://x/mcp","token":"t"}]`, `[]`, "unknown field"},
		"aliasing tenant secret": {`[{"name":"crm","url":"https://x/mcp","headers":{"Authorization":{"secret_arn":"baton/crm-{tenant}"}}}]`, `[]`, "put a path after {tenant}"},
		"an mcp/ tool":           {`[]`, `[{"name":"mcp/crm/get","source":"crm","description":"x","executor":{"type":"go","handler":"echo"}}]`, "discovered from the servers"},
	} {
		if _, err := Parse([]byte(agent(c.servers, c.tools))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// TestAgentAndHandoffTools: an agent tool without parameters takes task
// and context, keeps its output_schema and names its agent; a handoff
// gives a handoff/<agent> tool named after the other agent's label.
func TestAgentAndHandoffTools(t *testing.T) {
	r, err := Parse([]byte(`{"agents":[
	 {"slug":"lead","model":{"provider":"x"},"handoffs":["desk"],"max_depth":2,"tools":[
	  {"name":"agent/desk","description":"Ask the desk.","executor":{"type":"agent","agent":"desk"},"output_schema":{"type":"object"}}]},
	 {"slug":"desk","label":"Help desk","model":{"provider":"x"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Get("lead")
	if len(a.Tools) != 2 || len(a.Executors) != 0 {
		t.Fatalf("tools %+v, executors %v", a.Tools, a.Executors)
	}
	ag, ho := a.Tools[0], a.Tools[1]
	req, _ := ag.Parameters["required"].([]any)
	if ag.ChildAgent() != "desk" || ag.Source != "agent" || len(req) != 1 || req[0] != "task" || ag.Extensions["output_schema"] == nil {
		t.Fatalf("agent tool %+v", ag)
	}
	if ho.Name != "handoff/desk" || ho.HandoffAgent() != "desk" || !strings.Contains(ho.Description, "Help desk") {
		t.Fatalf("handoff tool %+v", ho)
	}
	cfg, err := a.RunConfig(Overrides{})
	if err != nil || cfg.MaxDepth != 2 {
		t.Fatalf("config max_depth %d, %v", cfg.MaxDepth, err)
	}
}

// TestRemoteAgentTools: an a2a tool is a server tool whose executor is
// a remote agent: source a2a and one message parameter unless declared;
// a card_url is required, without credentials, with at most one secret.
func TestRemoteAgentTools(t *testing.T) {
	r, err := Parse([]byte(`{"agents":[{"slug":"lead","model":{"provider":"x"},"tools":[
	  {"name":"a2a/researcher","description":"Research.","executor":{"type":"a2a","card_url":"https://r.example.com/.well-known/agent-card.json","secret_env":"TOKEN_{tenant}","timeout":"5s"}},
	  {"name":"a2a/typed","source":"partner","description":"Typed.","parameters":{"type":"object","properties":{"n":{"type":"integer"}}},
	   "executor":{"type":"a2a","card_url":"http://127.0.0.1:9/card.json"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Get("lead")
	plain, typed := a.Tools[0], a.Tools[1]
	req, _ := plain.Parameters["required"].([]any)
	if plain.Executor != "a2a" || plain.Source != "a2a" || len(req) != 1 || req[0] != "message" {
		t.Fatalf("default a2a tool %+v", plain)
	}
	if typed.Executor != "a2a" || typed.Source != "partner" || typed.Parameters["properties"] == nil {
		t.Fatalf("typed a2a tool %+v", typed)
	}
	if ex := a.Executors["a2a/researcher"]; ex.CardURL == "" || ex.SecretEnv != "TOKEN_{tenant}" || ex.Timeout != "5s" {
		t.Fatalf("executor %+v", ex)
	}
	for _, bad := range []string{
		`{"type":"a2a"}`,
		`{"type":"a2a","card_url":"ftp://x/card.json"}`,
		`{"type":"a2a","card_url":"https://user:pw@x/card.json"}`,
		`{"type":"a2a","card_url":"https://x/card.json","secret_env":"A","secret_ssm":"/b"}`,
		`{"type":"a2a","card_url":"https://x/card.json","url":"https://x"}`,
		`{"type":"http","url":"https://x","secret_env":"A","card_url":"https://x/card.json"}`,
	} {
		_, err := Parse([]byte(`{"agents":[{"slug":"lead","model":{"provider":"x"},"tools":[{"name":"a2a/x","description":"X.","executor":` + bad + `}]}]}`))
		if err == nil {
			t.Errorf("executor %s accepted", bad)
		}
	}
}
