package agents_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-agents/baton/internal/agents"
)

func agentFile(extra string) string {
	return `{"agents":[{"slug":"hooked","model":{"provider":"scripted"}` + extra + `}]}`
}

// Misconfigured callbacks are refused at load, naming the agent and the
// field.
func TestCallbackLoadErrors(t *testing.T) {
	for _, c := range []struct{ name, extra, want string }{
		{"no secret", `,"callback":{"url":"https://hooks.example.com/x"}`, "callback: set exactly one of secret_env"},
		{"two secrets", `,"callback":{"secret_env":"A","secret_ssm":"/b"}`, "callback: set exactly one of secret_env"},
		{"bad url", `,"callback":{"url":"ftp://x","secret_env":"A"}`, "callback.url"},
		{"bad event", `,"callback":{"secret_env":"A","events":["started"]}`, "callback.events: unknown event \"started\""},
		{"bad timeout", `,"callback":{"secret_env":"A","timeout":"soon"}`, "callback.timeout"},
		{"override without hosts", `,"allow_overrides":["callback"],"callback":{"secret_env":"A"}`, "allow_overrides: callback needs"},
		{"override without secret", `,"allow_overrides":["callback"],"callback_hosts":["hooks.example.com"]`, "allow_overrides: callback needs"},
		{"hosts without override", `,"callback":{"secret_env":"A"},"callback_hosts":["hooks.example.com"]`, "callback_hosts: set only when"},
		{"host with a scheme", `,"allow_overrides":["callback"],"callback":{"secret_env":"A"},"callback_hosts":["https://hooks.example.com"]`, "callback_hosts[0]"},
		{"unknown field", `,"callback":{"secret_env":"A","secret":"x"}`, "unknown field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := agents.Parse([]byte(agentFile(c.extra)))
			if err == nil || !strings.Contains(err.Error(), c.want) || (!strings.Contains(err.Error(), "hooked") && c.name != "unknown field") {
				t.Fatalf("got %v, want an error naming hooked and %q", err, c.want)
			}
		})
	}
}

func TestCallbackRunConfig(t *testing.T) {
	reg, err := agents.Parse([]byte(`{"agents":[
	 {"slug":"open","model":{"provider":"scripted"},"allow_overrides":["callback"],
	  "callback":{"url":"https://ops.example.com/baton","secret_env":"A","events":["finished"]},"callback_hosts":["hooks.example.com"]},
	 {"slug":"closed","model":{"provider":"scripted"},"callback":{"url":"https://ops.example.com/baton","secret_ssm":"/baton/cb"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	open, _ := reg.Get("open")
	closed, _ := reg.Get("closed")

	// The operator's callback is every run's default.
	cfg, err := closed.RunConfig(agents.Overrides{})
	if err != nil || cfg.Callback == nil || cfg.Callback.URL != "https://ops.example.com/baton" || strings.Join(cfg.Callback.Events, ",") != "paused,finished,expired" {
		t.Fatalf("default callback: %+v %v", cfg.Callback, err)
	}
	if signers := reg.CallbackSigners(); signers["closed"].SecretSSM != "/baton/cb" || signers["open"].SecretEnv != "A" || signers["open"].URL != "" {
		t.Fatalf("signers: %+v", signers)
	}

	for _, c := range []struct {
		name     string
		agent    *agents.Agent
		req      agents.CallbackRequest
		wantCode string // "" ok; override_not_allowed; or the CallbackError code
		wantURL  string
		wantEvs  string
	}{
		{"allowed host", open, agents.CallbackRequest{URL: "https://Hooks.Example.com/run?x=1"}, "", "https://Hooks.Example.com/run?x=1", "finished"},
		{"allowed host, own events", open, agents.CallbackRequest{URL: "https://hooks.example.com/r", Events: []string{"paused", "paused"}}, "", "https://hooks.example.com/r", "paused"},
		{"disallowed host", open, agents.CallbackRequest{URL: "https://evil.example.com/r"}, "callback_host_not_allowed", "", ""},
		{"suffix of an allowed host", open, agents.CallbackRequest{URL: "https://hooks.example.com.evil.net/r"}, "callback_host_not_allowed", "", ""},
		{"a secret", open, agents.CallbackRequest{URL: "https://hooks.example.com/r", SecretEnv: "HOME"}, "invalid_callback", "", ""},
		{"not http", open, agents.CallbackRequest{URL: "file:///etc/passwd"}, "invalid_callback", "", ""},
		{"unknown event", open, agents.CallbackRequest{URL: "https://hooks.example.com/r", Events: []string{"x"}}, "invalid_callback", "", ""},
		{"agent not allowing overrides", closed, agents.CallbackRequest{URL: "https://hooks.example.com/r"}, "override_not_allowed", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			cfg, err := c.agent.RunConfig(agents.Overrides{Callback: &req})
			var oe *agents.OverrideError
			var ce *agents.CallbackError
			switch {
			case c.wantCode == "":
				if err != nil || cfg.Callback == nil || cfg.Callback.URL != c.wantURL || strings.Join(cfg.Callback.Events, ",") != c.wantEvs {
					t.Fatalf("got %+v %v", cfg.Callback, err)
				}
			case c.wantCode == "override_not_allowed":
				if !errors.As(err, &oe) || oe.Field != "callback" {
					t.Fatalf("got %v, want OverrideError callback", err)
				}
			default:
				if !errors.As(err, &ce) || ce.Code != c.wantCode {
					t.Fatalf("got %v, want %s", err, c.wantCode)
				}
			}
		})
	}
}
