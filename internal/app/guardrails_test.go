package app

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-agents/baton/internal/agents"
)

func guardedAgent(guardrails string) string {
	return `{"agents":[{"slug":"g","model":{"provider":"scripted"},"guardrails":` + guardrails + `}]}`
}

// TestBuildRefusesMisconfiguredGuardrails: a guardrails block that does
// not build stops the process at load (baton dev and the Lambdas build
// through here), naming the agent and the field.
func TestBuildRefusesMisconfiguredGuardrails(t *testing.T) {
	for _, tc := range []struct{ name, guardrails, want string }{
		{"bad regex", `{"input":[{"type":"regex","pattern":"[a-"}]}`, "agent g: guardrails.input[0] (regex): pattern: error parsing regexp"},
		{"unknown entity", `{"output":[{"type":"pii","entities":["passport"]}]}`, `agent g: guardrails.output[0] (pii): entities[0]: unknown entity "passport"`},
		{"chars", `{"output":[{"type":"max_length","chars":0}]}`, "agent g: guardrails.output[0] (max_length): chars: want a positive number of characters, got 0"},
		{"json_schema off the tool stage", `{"output":[{"type":"json_schema","schema":{"type":"object"}}]}`, "agent g: guardrails.output[0] (json_schema): json_schema checks tool arguments"},
		{"unknown type", `{"tool":[{"type":"clamav"}]}`, `agent g: guardrails.tool[0]: type: unknown type "clamav"`},
		{"on_error", `{"on_error":"maybe"}`, `agent g: guardrails.on_error: want "deny" or "allow", got "maybe"`},
		{"unknown stage", `{"inputs":[]}`, `unknown field "inputs"`},
		{"bedrock without a version", `{"input":[{"type":"bedrock","guardrail_id":"gr1"}]}`, "agent g: guardrails.input[0] (bedrock): "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: guardedAgent(tc.guardrails)}, Providers: []string{ProviderScripted}}, Deps{Log: quiet})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	a, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: guardedAgent(`{"output":[{"type":"pii","entities":["email"],"action":"redact"}]}`)}, Providers: []string{ProviderScripted}}, Deps{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// A Bedrock guardrail loads without AWS at hand: its client is made
	// on its first check.
	if _, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: guardedAgent(`{"input":[{"type":"bedrock","guardrail_id":"gr1","guardrail_version":"DRAFT"}]}`)}, Providers: []string{ProviderScripted}}, Deps{Log: quiet}); err != nil {
		t.Fatalf("a bedrock guardrail: %v", err)
	}
	ag, _ := a.Agents.Get("g")
	if cfg, err := ag.RunConfig(agents.Overrides{}); err != nil || !cfg.NoTokenStream {
		t.Errorf("an agent with output guardrails streams tokens (%v)", err)
	}
}
