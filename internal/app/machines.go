package app

import (
	"fmt"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/guardrails"
)

// agentMachines builds the step machine of every agent that has hooks of
// its own (today: guardrails), for an agent version's machines. Every
// process (the API, the worker, baton dev) builds the machines here, so a
// run's steps and outside inputs are planned and applied with the same
// hooks wherever they run; a process that runs no steps builds them with
// gd.ValidateOnly (its guardrails are never consulted: see
// versionBuilder.build). A misconfigured block is an error naming the
// agent and the field.
func agentMachines(reg *agents.Registry, gd guardrails.Deps) (map[string]*core.Machine, error) {
	out := map[string]*core.Machine{}
	for _, slug := range reg.Slugs() {
		a, _ := reg.Get(slug)
		if a.Spec.Guardrails == nil {
			continue
		}
		d := gd
		d.Agent = slug
		g, err := guardrails.Build(a.Spec.Guardrails, d)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", slug, err)
		}
		out[slug] = &core.Machine{Guardrails: g}
	}
	return out, nil
}
