package toolspec

import "encoding/json"

// Guardrails is an agent's guardrails block in the agents file: the rules
// of each stage, in order, and what a rule's error means. Package
// guardrails builds the checks from it.
type Guardrails struct {
	Input  []json.RawMessage `json:"input,omitempty"`
	Output []json.RawMessage `json:"output,omitempty"`
	Tool   []json.RawMessage `json:"tool,omitempty"`
	// OnError is "deny" (the default) or "allow".
	OnError string `json:"on_error,omitempty"`
}

// Guardrails on_error values.
const (
	GuardrailsOnErrorDeny  = "deny"
	GuardrailsOnErrorAllow = "allow"
)

// HasOutput reports whether the block has output rules (an agent with
// them does not stream the model's tokens: they would show a reply
// before the output rules checked it).
func (c *Guardrails) HasOutput() bool { return c != nil && len(c.Output) > 0 }
