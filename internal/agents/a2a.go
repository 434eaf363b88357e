package agents

import (
	"fmt"
	"strings"
)

// A2ASpec opts an agent in to the A2A edge (package a2aserver): its Agent
// Card at /a2a/{agent}/.well-known/agent-card.json and the JSON-RPC
// binding at /a2a/{agent}. Description is the card's (default: the
// agent's label); Skills are what the card advertises.
type A2ASpec struct {
	Enabled     bool   `json:"enabled"`
	Description string `json:"description,omitempty"`
	// Version is the card's version of the agent (default "1.0.0").
	Version string     `json:"version,omitempty"`
	Skills  []A2ASkill `json:"skills,omitempty"`
}

// A2ASkill is one skill of an agent's card.
type A2ASkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags,omitempty"`
	Examples    []string `json:"examples,omitempty"`
	InputModes  []string `json:"input_modes,omitempty"`
	OutputModes []string `json:"output_modes,omitempty"`
}

// A2A is the agent's A2A declaration when it is enabled, else nil.
func (a *Agent) A2A() *A2ASpec {
	if a.Spec.A2A == nil || !a.Spec.A2A.Enabled {
		return nil
	}
	return a.Spec.A2A
}

// parseA2A checks the agent's a2a declaration: every skill has an id
// (unique), a name and a description.
func (a *Agent) parseA2A() error {
	s := a.Spec.A2A
	if s == nil {
		return nil
	}
	seen := map[string]bool{}
	for i, sk := range s.Skills {
		switch {
		case strings.TrimSpace(sk.ID) == "":
			return fmt.Errorf("a2a.skills[%d]: id is required", i)
		case seen[sk.ID]:
			return fmt.Errorf("a2a.skills[%d]: duplicate id %q", i, sk.ID)
		case strings.TrimSpace(sk.Name) == "":
			return fmt.Errorf("a2a.skills[%d] (%s): name is required", i, sk.ID)
		case strings.TrimSpace(sk.Description) == "":
			return fmt.Errorf("a2a.skills[%d] (%s): description is required", i, sk.ID)
		}
		seen[sk.ID] = true
	}
	if len(s.Skills) > 0 && !s.Enabled {
		return fmt.Errorf("a2a: skills are declared but enabled is false: set \"enabled\": true to serve the agent over A2A, or remove the a2a block")
	}
	return nil
}
