// Package guardrails builds an agent's §13.4 guardrails (input, output
// and tool) from its agents-file configuration: declarative rules
// (regex, PII, maximum length, JSON Schema), Amazon Bedrock Guardrails,
// and http or lambda hooks, each a Rule. Build turns an agent's rules
// into the core.Guardrails of the step machine the durable runner uses
// for that agent's runs (an agent version's machines).
//
// Every process validates every rule type here. The declarative rules
// live in this package and the hook rules in internal/hooks, which every
// process links; the rule that calls Amazon Bedrock's ApplyGuardrail is
// internal/guardrails/bedrock, linked only where steps run (the worker
// and baton dev, through app.Features) and passed to Build as
// Deps.Bedrock, so that the API, the sweeper and the intake function do
// not link the Bedrock runtime client.
package guardrails

import (
	"context"

	"github.com/baton-agents/baton/core"
)

// Stage is where in the loop a rule checks: before the model call
// (input), on the model's reply (output), or before a tool executes
// (tool).
type Stage string

// Stages.
const (
	StageInput  Stage = "input"
	StageOutput Stage = "output"
	StageTool   Stage = "tool"
)

// Subject is what a rule checks at one stage.
type Subject struct {
	Stage Stage
	// RunID and Tenant identify the run (Tenant may be empty where the
	// machine does not know it); Agent is the agent's slug.
	RunID, Tenant, Agent string
	// Messages is the model's view at the input stage (the whole list,
	// as §13.4 passes it); Message is the model's reply at the output
	// stage.
	Messages []core.Message
	Message  core.Message
	// Tool and Args are the call at the tool stage (Args is a copy).
	Tool string
	Args map[string]any
}

// Verdict is a rule's answer.
type Verdict struct {
	// Allow is false to deny; Reason is then required.
	Allow  bool
	Reason string
	// Replacement, when set on an allowing verdict, is the redacted text
	// that replaces what was checked (the reply's content at the output
	// stage; the newest user message's content at the input stage).
	Replacement *string
	// Redactions, at the input stage, replace the content of other
	// messages of Subject.Messages, keyed by index (Replacement, when
	// also set, wins for the newest user message). The declarative rules
	// redact every user message the model would see this way.
	Redactions map[int]string
}

// Rule is one configured guardrail. An error (or a timeout through ctx)
// is not a verdict: the agent's on_error setting decides (deny by
// default).
type Rule interface {
	Check(ctx context.Context, s Subject) (Verdict, error)
}
