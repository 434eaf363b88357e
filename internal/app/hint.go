package app

import (
	"encoding/json"
	"slices"

	"github.com/baton-agents/baton/internal/agents"
)

// StartHint is a POST /v1/runs body that starts a run of the first agent
// of the loaded agents file: a user message, and a scripted model reply
// when the agent's own model is a scripted one without a script, the
// agent lets callers override its model and the scripted provider is
// enabled (as in baton dev).
func (a *App) StartHint() (agent string, body []byte) {
	first := a.Agents.First()
	b := map[string]any{"agent": first.Spec.Slug, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	own := first.Spec.Model
	scriptless := own.Provider == ProviderScripted && len(own.Turns) == 0
	if scriptless && first.Allows(agents.OverrideModel) && slices.Contains(a.Config.Providers, ProviderScripted) {
		b["model"] = map[string]any{"provider": ProviderScripted, "turns": []any{map[string]any{"content": "Hello!"}}}
	}
	out, _ := json.Marshal(b)
	return first.Spec.Slug, out
}
