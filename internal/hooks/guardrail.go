package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/guardrails"
	"github.com/baton-agents/baton/internal/toolspec"
)

// GuardrailRequest is what a guardrail hook gets: the stage, the run, and
// what is checked there (messages at the input stage, message at the
// output stage, tool and arguments at the tool stage).
type GuardrailRequest struct {
	Hook      string           `json:"hook"` // "guardrail"
	Stage     guardrails.Stage `json:"stage"`
	RunID     string           `json:"run_id"`
	Agent     string           `json:"agent"`
	Tenant    string           `json:"tenant,omitempty"`
	Messages  *[]core.Message  `json:"messages,omitempty"`
	Message   *core.Message    `json:"message,omitempty"`
	Tool      string           `json:"tool,omitempty"`
	Arguments *map[string]any  `json:"arguments,omitempty"`
}

// GuardrailAnswer is a guardrail hook's verdict: allow is required;
// reason says why on deny; replacement, read only when allow is true,
// replaces the checked text (the reply's content at the output stage, the
// newest user message's content at the input stage).
type GuardrailAnswer struct {
	Allow       *bool   `json:"allow"`
	Reason      string  `json:"reason,omitempty"`
	Replacement *string `json:"replacement,omitempty"`
}

// Rule is a guardrail rule that asks an http or lambda hook.
type Rule struct{ h *Hook }

var _ guardrails.Rule = (*Rule)(nil)

// NewRule builds the guardrail rule of an http or lambda hook, once, at
// cold start (see New).
func NewRule(ctx context.Context, remote *executors.Remote, ex toolspec.Executor) (*Rule, error) {
	h, err := New(ctx, remote, NameGuardrail, ex)
	if err != nil {
		return nil, err
	}
	return &Rule{h: h}, nil
}

// ParseRule reads a rule object of the agents file that is an executor
// object ({"type":"http"|"lambda", "url"|"function", "secret_env"|
// "secret_ssm"|"secret_arn", "timeout"}; other fields are errors) and
// builds its rule.
func ParseRule(ctx context.Context, remote *executors.Remote, raw any) (*Rule, error) {
	hk, err := toolspec.ParseHook(raw)
	if err != nil {
		return nil, err
	}
	return NewRule(ctx, remote, hk.Executor)
}

// RuleFromJSON is ParseRule on a rule object's JSON (as the guardrails
// block holds it).
func RuleFromJSON(ctx context.Context, remote *executors.Remote, raw json.RawMessage) (*Rule, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode the rule: %w", err)
	}
	return ParseRule(ctx, remote, v)
}

// Check asks the hook. A failed call or an answer without allow is an
// error, for the guardrails' on_error setting to decide.
func (r *Rule) Check(ctx context.Context, s guardrails.Subject) (guardrails.Verdict, error) {
	req := GuardrailRequest{Hook: NameGuardrail, Stage: s.Stage, RunID: s.RunID, Agent: s.Agent, Tenant: s.Tenant}
	switch s.Stage {
	case guardrails.StageInput:
		msgs := s.Messages
		if msgs == nil {
			msgs = []core.Message{}
		}
		req.Messages = &msgs
	case guardrails.StageOutput:
		m := s.Message
		req.Message = &m
	case guardrails.StageTool:
		args := s.Args
		if args == nil {
			args = map[string]any{}
		}
		req.Tool, req.Arguments = s.Tool, &args
	default:
		return guardrails.Verdict{}, fmt.Errorf("%s hook: unknown stage %q", NameGuardrail, s.Stage)
	}
	var a GuardrailAnswer
	if err := r.h.Call(ctx, req, "", &a); err != nil {
		return guardrails.Verdict{}, err
	}
	if a.Allow == nil {
		return guardrails.Verdict{}, fmt.Errorf("%s hook: invalid answer: allow (true or false) is required", NameGuardrail)
	}
	v := guardrails.Verdict{Allow: *a.Allow, Reason: a.Reason}
	if v.Allow {
		v.Reason, v.Replacement = "", a.Replacement
	}
	return v, nil
}
