package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/hooks"
)

// addAgentHooks builds, once at cold start, the pre_tool_mediator and
// completion_policy hooks of every agent that configures them, and puts
// them in that agent's step machine in machines (creating it when
// absent). Build calls it in every process, so the worker (steps) and
// the API (approvals, client results and other outside inputs, which
// the machine applies there) both call the hooks. A hook that cannot be
// built (no signing secret, no AWS for a lambda hook) is an error naming
// the agent and the field.
func addAgentHooks(ctx context.Context, reg *agents.Registry, remote *executors.Remote, log *slog.Logger, machines map[string]*core.Machine) error {
	for _, slug := range reg.Slugs() {
		a, _ := reg.Get(slug)
		if a.Mediator == nil && a.Completion == nil {
			continue
		}
		m := machines[slug]
		if m == nil {
			m = &core.Machine{}
			machines[slug] = m
		}
		if hk := a.Mediator; hk != nil {
			h, err := hooks.New(ctx, remote, hooks.NameMediator, hk.Executor)
			if err != nil {
				return fmt.Errorf("agent %s: %w", slug, err)
			}
			m.PreToolMediator = hooks.Mediator(h, slug, hk.OnError, log)
		}
		if hk := a.Completion; hk != nil {
			h, err := hooks.New(ctx, remote, hooks.NameCompletion, hk.Executor)
			if err != nil {
				return fmt.Errorf("agent %s: %w", slug, err)
			}
			m.CompletionPolicy = hooks.Completion(h, slug, log)
		}
	}
	return nil
}
