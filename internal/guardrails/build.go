package guardrails

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/secrets"
	"github.com/baton-agents/baton/internal/toolspec"
)

// Config is an agent's guardrails block in the agents file (the
// declaration, toolspec.Guardrails), which Build turns into checks.
type Config = toolspec.Guardrails

// on_error values.
const (
	OnErrorDeny  = toolspec.GuardrailsOnErrorDeny
	OnErrorAllow = toolspec.GuardrailsOnErrorAllow
)

// Deps are what a rule's constructor may use. Build fills Agent, Stage
// and Log for each rule; the rest comes from the composition root.
type Deps struct {
	// Agent is the slug of the agent; Stage the stage of the rule being
	// built.
	Agent string
	Stage Stage
	// AWS loads the AWS configuration (nil: AWS is not available).
	AWS awsenv.Loader
	// Bedrock builds Amazon Bedrock Guardrails rules
	// (internal/guardrails/bedrock); nil: this process does not link
	// them, and a bedrock rule is an error unless ValidateOnly.
	Bedrock BedrockBuilder
	// ValidateOnly says the process never consults the checks Build
	// returns (it runs no steps: the API, the sweeper and the intake
	// function build an agent's machine to validate its file and to apply
	// outside inputs, which consult no guardrail). A rule type it does not
	// link (bedrock without Bedrock) is then validated only, and denies if
	// it is ever checked.
	ValidateOnly bool
	// Secrets resolves secret references (nil: none).
	Secrets *secrets.Resolver
	// Remote builds http and lambda endpoints (the guardrail hooks of
	// package hooks); nil: none.
	Remote *executors.Remote
	Log    *slog.Logger
}

// Constructor builds a rule of one type from its JSON object (which
// includes "type") for the stage in d.Stage. Its error names the field
// at fault (e.g. "pattern: …"); Build prefixes the rule's place.
type Constructor func(raw json.RawMessage, d Deps) (Rule, error)

var (
	regMu        sync.RWMutex
	constructors = map[string]Constructor{}
)

// Register adds a rule type; each type's file registers itself in its
// init function. Registering a type twice panics.
func Register(typ string, c Constructor) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := constructors[typ]; dup {
		panic("guardrails: rule type " + typ + " registered twice")
	}
	constructors[typ] = c
}

// planned are rule types that builds without their implementation
// reject with a clear message rather than as unknown.
var planned = map[string]bool{"http": true, "lambda": true}

func constructor(typ string) (Constructor, error) {
	regMu.RLock()
	defer regMu.RUnlock()
	if c, ok := constructors[typ]; ok {
		return c, nil
	}
	types := make([]string, 0, len(constructors))
	for t := range constructors {
		types = append(types, t)
	}
	sort.Strings(types)
	if planned[typ] {
		return nil, fmt.Errorf("type %q is not available in this build (available: %s)", typ, strings.Join(types, ", "))
	}
	return nil, fmt.Errorf("unknown type %q (want one of %s)", typ, strings.Join(types, ", "))
}

// DecodeStrict decodes a rule's JSON object into v (a struct that has a
// Type field for "type"); unknown fields are errors, numbers decode as
// json.Number into interface values.
func DecodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

// built is one rule and where it was configured, for logs and errors.
type built struct {
	rule  Rule
	typ   string
	index int
}

// Build turns an agent's guardrails block into the core.Guardrails of
// its step machine; a nil block or a stage without rules leaves that
// hook nil. Errors name the field: "guardrails.input[0].pattern: …".
func Build(c *Config, d Deps) (core.Guardrails, error) {
	var g core.Guardrails
	if c == nil {
		return g, nil
	}
	allow := false
	switch c.OnError {
	case "", OnErrorDeny:
	case OnErrorAllow:
		allow = true
	default:
		return g, fmt.Errorf("guardrails.on_error: want %q or %q, got %q", OnErrorDeny, OnErrorAllow, c.OnError)
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	stages := []struct {
		stage Stage
		raws  []json.RawMessage
	}{{StageInput, c.Input}, {StageOutput, c.Output}, {StageTool, c.Tool}}
	chains := map[Stage]*chain{}
	for _, st := range stages {
		if len(st.raws) == 0 {
			continue
		}
		ch := &chain{agent: d.Agent, stage: st.stage, allowOnError: allow, log: d.Log}
		for i, raw := range st.raws {
			r, typ, err := buildRule(raw, st.stage, d)
			if err != nil {
				return g, fmt.Errorf("guardrails.%s[%d]%s: %w", st.stage, i, typeSuffix(typ), err)
			}
			ch.rules = append(ch.rules, built{rule: r, typ: typ, index: i})
		}
		chains[st.stage] = ch
	}
	if ch := chains[StageInput]; ch != nil {
		g.Input = ch.input
	}
	if ch := chains[StageOutput]; ch != nil {
		g.Output = ch.output
	}
	if ch := chains[StageTool]; ch != nil {
		g.Tool = ch.tool
	}
	return g, nil
}

func typeSuffix(typ string) string {
	if typ == "" {
		return ""
	}
	return " (" + typ + ")"
}

func buildRule(raw json.RawMessage, stage Stage, d Deps) (Rule, string, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, "", fmt.Errorf("want a rule object: %w", err)
	}
	if head.Type == "" {
		return nil, "", fmt.Errorf("type is required")
	}
	ctor, err := constructor(head.Type)
	if err != nil {
		return nil, "", fmt.Errorf("type: %w", err)
	}
	d.Stage = stage
	r, err := ctor(raw, d)
	if err != nil {
		return nil, head.Type, err
	}
	return r, head.Type, nil
}

// chain runs one stage's rules in order: the first deny wins, and each
// rule sees the redactions of the rules before it.
type chain struct {
	agent        string
	stage        Stage
	rules        []built
	allowOnError bool
	log          *slog.Logger
}

// check runs the rules on s, calling redact with each allowing verdict
// (which applies its redactions to s for the next rule). A rule's error
// (or panic) denies or is skipped, as on_error says.
func (ch *chain) check(ctx context.Context, s *Subject, redact func(Verdict)) core.GuardrailResult {
	sc := core.GuardrailScopeFrom(ctx)
	s.RunID, s.Tenant, s.Agent = sc.RunID, sc.Tenant, ch.agent
	for _, b := range ch.rules {
		v, err := safeCheck(ctx, b.rule, *s)
		if err != nil {
			ch.log.ErrorContext(ctx, "guardrail rule failed", "agent", ch.agent, "run_id", sc.RunID, "stage", ch.stage, "rule", b.index, "type", b.typ, "on_error", map[bool]string{true: OnErrorAllow, false: OnErrorDeny}[ch.allowOnError], "err", err)
			if ch.allowOnError {
				continue
			}
			return core.Deny("guardrail error: " + err.Error())
		}
		if !v.Allow {
			reason := strings.TrimSpace(v.Reason)
			if reason == "" {
				reason = fmt.Sprintf("denied by %s rule %d", b.typ, b.index)
			}
			return core.Deny(reason)
		}
		redact(v)
	}
	return core.Allow()
}

// safeCheck calls a rule; a panic is an error, so on_error decides.
func safeCheck(ctx context.Context, r Rule, s Subject) (v Verdict, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("rule panicked: %v", p)
		}
	}()
	return r.Check(ctx, s)
}

func (ch *chain) input(ctx context.Context, msgs []core.Message) core.GuardrailResult {
	view := append([]core.Message(nil), msgs...)
	s := &Subject{Stage: StageInput, Messages: view}
	changed := map[int]bool{}
	res := ch.check(ctx, s, func(v Verdict) {
		// A new slice per rule: a rule may have kept the one it saw.
		next := append([]core.Message(nil), s.Messages...)
		for i, text := range v.Redactions {
			if i >= 0 && i < len(next) {
				next[i].Content = text
				changed[i] = true
			}
		}
		if v.Replacement != nil {
			if i := newestUser(next); i >= 0 {
				next[i].Content = *v.Replacement
				changed[i] = true
			}
		}
		s.Messages = next
	})
	if !res.Allowed || len(changed) == 0 {
		return res
	}
	res.Redactions = map[int]string{}
	for i := range changed {
		if s.Messages[i].Content != msgs[i].Content {
			res.Redactions[i] = s.Messages[i].Content
		}
	}
	return res
}

func (ch *chain) output(ctx context.Context, msg core.Message) core.GuardrailResult {
	s := &Subject{Stage: StageOutput, Message: msg}
	res := ch.check(ctx, s, func(v Verdict) {
		if v.Replacement != nil {
			s.Message.Content = *v.Replacement
		}
	})
	if res.Allowed && s.Message.Content != msg.Content {
		res.Replacement = &s.Message.Content
	}
	return res
}

func (ch *chain) tool(ctx context.Context, name string, args map[string]any) core.GuardrailResult {
	s := &Subject{Stage: StageTool, Tool: name, Args: args}
	// A tool verdict only allows or denies; redactions are ignored.
	return ch.check(ctx, s, func(Verdict) {})
}

// newestUser is the index of the last user message, or -1.
func newestUser(msgs []core.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == core.RoleUser {
			return i
		}
	}
	return -1
}
