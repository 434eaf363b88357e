package app

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/guardrails"
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
	ag, _ := a.Agents.Get("g")
	if cfg, err := ag.RunConfig(agents.Overrides{}); err != nil || !cfg.NoTokenStream {
		t.Errorf("an agent with output guardrails streams tokens (%v)", err)
	}
}

// denyAll is a guardrail rule that denies everything, naming itself.
type denyAll string

func (d denyAll) Check(context.Context, guardrails.Subject) (guardrails.Verdict, error) {
	return guardrails.Verdict{Reason: string(d)}, nil
}

// TestBedrockGuardrailsAreAFeature: the Bedrock Guardrails rule is built
// by Features.BedrockGuardrails (internal/guardrails/bedrock, linked by
// the worker and baton dev). Where steps run, an agents file with a
// bedrock rule and no such feature is refused at load; where they do not
// (the API, the sweeper, the intake function), the rule is validated —
// an invalid one is refused — and its machine, never consulted there,
// denies if it is.
func TestBedrockGuardrailsAreAFeature(t *testing.T) {
	ctx := context.Background()
	const rule = `{"output":[{"type":"bedrock","guardrail_id":"gr1","guardrail_version":"DRAFT"}]}`
	build := func(guardrails string, executeTools bool, f Features) (*App, error) {
		return Build(ctx, Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: guardedAgent(guardrails)}, Providers: []string{ProviderScripted}, ExecuteTools: executeTools}, Deps{Log: quiet, Features: f})
	}
	outputGuardrail := func(t *testing.T, a *App) core.GuardrailResult {
		t.Helper()
		v, err := a.opts.Versions.Load(ctx, a.AgentVersion)
		if err != nil {
			t.Fatal(err)
		}
		m := v.Machines["g"]
		if m == nil || m.Guardrails.Output == nil {
			t.Fatal("agent g has no output guardrail")
		}
		return m.Guardrails.Output(ctx, core.Message{Role: core.RoleAssistant, Content: "hi"})
	}

	// Where steps run, without the feature: refused at load.
	if _, err := build(rule, true, Features{}); err == nil || !strings.Contains(err.Error(), "agent g: guardrails.output[0] (bedrock): this process runs steps but does not link Amazon Bedrock Guardrails") {
		t.Errorf("a bedrock rule where steps run without the feature: %v", err)
	}

	// With it: the feature builds the rule from the validated
	// configuration and the process's AWS configuration, on neither of
	// which a load waits (AWS is loaded on the first check).
	var got []guardrails.BedrockConfig
	f := Features{BedrockGuardrails: func(cfg guardrails.BedrockConfig, load awsenv.Loader) (guardrails.Rule, error) {
		if load == nil {
			t.Error("the feature got no AWS configuration")
		}
		got = append(got, cfg)
		return denyAll("the feature's rule"), nil
	}}
	a, err := build(rule, true, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := (guardrails.BedrockConfig{GuardrailID: "gr1", GuardrailVersion: "DRAFT"}); len(got) != 1 || got[0] != want {
		t.Errorf("the feature built %+v, want %+v", got, want)
	}
	if r := outputGuardrail(t, a); r.Allowed || r.Reason != "the feature's rule" {
		t.Errorf("the output guardrail is not the feature's rule: %+v", r)
	}

	// Where steps do not run, without the feature: validated only.
	if _, err := build(`{"output":[{"type":"bedrock","guardrail_id":"gr1","guardrail_version":"latest"}]}`, false, Features{}); err == nil || !strings.Contains(err.Error(), `agent g: guardrails.output[0] (bedrock): bedrock rule: guardrail_version "latest" must be a version number`) {
		t.Errorf("an invalid bedrock rule where steps do not run: %v", err)
	}
	a, err = build(`{"on_error":"allow",`+rule[1:], false, Features{})
	if err != nil {
		t.Fatalf("a bedrock rule where steps do not run: %v", err)
	}
	if r := outputGuardrail(t, a); r.Allowed || !strings.Contains(r.Reason, "bedrock guardrail gr1 (version DRAFT) is not linked into this process") {
		t.Errorf("an unlinked bedrock rule, checked anyway: %+v", r)
	}
}
