package app

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
)

func compactingAgent(compaction string) string {
	return `{"agents":[{"slug":"c","model":{"provider":"scripted"},"allow_overrides":["model"],"compaction":` + compaction + `}]}`
}

// TestBuildRefusesMisconfiguredCompaction: a compaction block that would
// make every summary fail stops the process at load, naming the agent
// and the field.
func TestBuildRefusesMisconfiguredCompaction(t *testing.T) {
	for _, tc := range []struct{ name, compaction, want string }{
		{"disabled provider", `{"enabled":true,"max_messages":20,"model":{"provider":"openai","model":"gpt-4o-mini"}}`,
			`agent c: compaction.model.provider "openai" is not enabled in this deployment (enabled: scripted)`},
		{"unknown provider", `{"enabled":true,"max_messages":20,"model":{"provider":"gpt"}}`, `agents[0].compaction.model.provider: unknown provider "gpt" (this build has scripted, openai, anthropic, bedrock)`},
		{"no threshold", `{"enabled":true}`, "BATON_AGENTS_JSON:1:97: agents[0].compaction.max_messages: compaction.max_messages must be at least 2"},
		{"recent above max", `{"enabled":true,"max_messages":10,"recent_messages":12}`, "agents[0].compaction.recent_messages: compaction.recent_messages (12) must be below compaction.max_messages (10)"},
		{"unknown field", `{"enabled":true,"max_messages":10,"keep":3}`, `unknown field "keep"`},
		{"bad scripted option", `{"enabled":true,"max_messages":10,"model":{"provider":"scripted","options":{"summary_usage":7}}}`, "agents[0].compaction.model.options: scripted model: summary_usage must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(context.Background(), Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: compactingAgent(tc.compaction)}, Providers: []string{ProviderScripted}}, Deps{Log: quiet})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCompactionWorksOutOfTheBox: an app built from an agents file with
// compaction, and nothing else, writes summaries with the agent's model
// (or Deps.Summarizer, when set).
func TestCompactionWorksOutOfTheBox(t *testing.T) {
	for _, tc := range []struct {
		name       string
		summarizer core.Summarizer
		want       string
	}{
		{"the agent's model", nil, "[Conversation summary: Summary of 4 earlier messages.]"},
		{"Deps.Summarizer", core.SummarizerFunc(func(context.Context, core.SummaryRequest) (string, error) { return "by the hook", nil }), "[Conversation summary: by the hook]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			a, err := Build(ctx, Config{Stores: Stores{Memory: true}, Agents: Agents{JSON: compactingAgent(`{"enabled":true,"max_messages":4,"recent_messages":2}`)},
				Providers: []string{ProviderScripted}}, Deps{Log: quiet, Summarizer: tc.summarizer})
			if err != nil {
				t.Fatal(err)
			}
			var msgs []core.Message
			for _, s := range []string{"one", "two", "three", "four", "five", "six"} {
				msgs = append(msgs, core.Message{Role: core.RoleUser, Content: s})
			}
			model := &core.ModelSpec{Provider: core.ProviderScripted, Turns: []core.ScriptedTurn{{Content: "Done."}}}
			snap, err := a.Runner.Start(ctx, "t", durable.StartRequest{Agent: "c", Messages: msgs, Overrides: agents.Overrides{Model: model}})
			if err != nil {
				t.Fatal(err)
			}
			drainSteps(t, a)
			rec, err := a.Runner.Get(ctx, "t", snap.State.RunID)
			if err != nil {
				t.Fatal(err)
			}
			v, err := a.Runner.View(ctx, rec, 0)
			if err != nil {
				t.Fatal(err)
			}
			env := v.Result
			if env.Status != core.StatusCompleted || len(env.Messages) != 8 || env.Messages[6].Content != tc.want {
				t.Fatalf("status %s, error %+v, messages %+v", env.Status, env.Error, env.Messages)
			}
		})
	}
}
