package core

import (
	"context"
	"fmt"
	"strings"
)

// PreToolMediator is the pre_tool_mediator hook.
type PreToolMediator func(ctx context.Context, mc MediationContext) MediatorDecision

// MediationContext is what the pre-tool mediator sees.
type MediationContext struct {
	RunID       string
	Turn        int
	ToolName    string
	ToolCallID  string
	Parameters  map[string]any
	Declaration ToolDeclaration
	Principal   *Principal
	Messages    []Message
	// PriorMediated holds the results already recorded in this turn.
	PriorMediated []ToolResult
}

// Mediator actions.
const (
	MediatorProceed       = "proceed"
	MediatorReject        = "reject"
	MediatorReplaceResult = "replace_result"
)

// MediatorDecision is the pre-tool mediator's answer.
type MediatorDecision struct {
	Action   string
	Error    string
	Metadata map[string]any
	// Result is the replacement result of replace_result (an envelope with
	// "success", or a bare value taken as a success).
	Result any
	// Complete stops the loop after this call's result is appended.
	Complete bool
}

func callMediator(ctx context.Context, f PreToolMediator, mc MediationContext) (d MediatorDecision) {
	defer func() {
		if r := recover(); r != nil {
			d = MediatorDecision{Action: MediatorReject, Error: fmt.Sprintf("pre-tool mediator panicked: %v", r)}
		}
	}()
	return f(ctx, mc)
}

// CompletionPolicy is consulted after each mediated tool result.
type CompletionPolicy func(ctx context.Context, cc CompletionContext) CompletionDecision

// CompletionContext is what the completion policy sees.
type CompletionContext struct {
	RunID      string
	Turn       int
	ToolName   string
	ToolCallID string
	Result     ToolResult
}

// CompletionDecision: Complete stops the loop after the current turn; an
// incomplete decision with a Message adds it to the run's inbox as a user
// continuation message.
type CompletionDecision struct {
	Complete bool
	Message  string
	Context  map[string]any
}

func callCompletion(ctx context.Context, f CompletionPolicy, cc CompletionContext) (d CompletionDecision) {
	defer func() {
		if r := recover(); r != nil {
			d = CompletionDecision{}
		}
	}()
	return f(ctx, cc)
}

// GuardrailResult allows or denies; Reason is required on deny.
type GuardrailResult struct {
	Allowed bool
	Reason  string
}

// Allow is the allowing result.
func Allow() GuardrailResult { return GuardrailResult{Allowed: true} }

// Deny denies with a reason.
func Deny(reason string) GuardrailResult { return GuardrailResult{Reason: reason} }

// Guardrails are the three §13.4 hooks. A hook that panics denies.
type Guardrails struct {
	Input  func(ctx context.Context, msgs []Message) GuardrailResult
	Output func(ctx context.Context, msg Message) GuardrailResult
	Tool   func(ctx context.Context, name string, args map[string]any) GuardrailResult
}

func checkGuardrail(f func() GuardrailResult) (res GuardrailResult) {
	defer func() {
		if r := recover(); r != nil {
			res = Deny(fmt.Sprintf("guardrail panicked: %v", r))
		}
	}()
	res = f()
	if !res.Allowed && strings.TrimSpace(res.Reason) == "" {
		res.Reason = "no reason given"
	}
	return res
}

// Summarizer condenses older messages for compaction. It is caller
// supplied, so core never chooses a model.
type Summarizer interface {
	Summarize(ctx context.Context, req SummaryRequest) (string, error)
}

// SummarizerFunc adapts a function to Summarizer.
type SummarizerFunc func(ctx context.Context, req SummaryRequest) (string, error)

// Summarize calls f.
func (f SummarizerFunc) Summarize(ctx context.Context, req SummaryRequest) (string, error) {
	return f(ctx, req)
}

// SummaryRequest is what a summarizer gets.
type SummaryRequest struct {
	RunID    string
	Messages []Message
}

func safeSummarize(ctx context.Context, s Summarizer, req SummaryRequest) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("summarizer panicked: %v", r)
		}
	}()
	return s.Summarize(ctx, req)
}

// ContextCompactor is the optional LLM compaction provider of §13.3: it
// writes a better summary of the dropped messages; on error or an empty
// answer the deterministic summary stays.
type ContextCompactor interface {
	CompactContext(ctx context.Context, dropped []Message) (string, error)
}

// PolicyContext is what policy hooks see.
type PolicyContext struct {
	RunID     string
	Agent     string
	Mode      string
	Principal *Principal
}

// ToolPolicyProvider is a host-provided tool access policy.
type ToolPolicyProvider func(ctx context.Context, pc PolicyContext) PolicyFragment

// PolicyFragment is what a host tool-policy provider contributes.
type PolicyFragment struct {
	Deny                []string
	DenyCategories      []string
	MandatoryTools      []string
	MandatoryCategories []string
}

func safeFragment(ctx context.Context, f ToolPolicyProvider, pc PolicyContext) (out PolicyFragment) {
	defer func() {
		if recover() != nil {
			out = PolicyFragment{}
		}
	}()
	return f(ctx, pc)
}

// ToolAccessChecker is the caller-owned access check; false hides a tool.
type ToolAccessChecker func(ctx context.Context, pc PolicyContext, decl ToolDeclaration) bool

func safeAccess(ctx context.Context, f ToolAccessChecker, pc PolicyContext, d ToolDeclaration) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false // fail closed
		}
	}()
	return f(ctx, pc, d)
}

// ActionPolicyProvider is a host-provided action policy; "" means no
// opinion.
type ActionPolicyProvider func(ctx context.Context, pc PolicyContext, decl ToolDeclaration) string

func safeActionProvider(ctx context.Context, f ActionPolicyProvider, pc PolicyContext, d ToolDeclaration) (v string) {
	defer func() {
		if recover() != nil {
			v = ActionForbidden // fail closed
		}
	}()
	return f(ctx, pc, d)
}

// ActionPolicyFilter is the final say over a resolved action policy.
type ActionPolicyFilter func(ctx context.Context, pc PolicyContext, d ToolDeclaration, resolved string) string

func safeActionFilter(ctx context.Context, f ActionPolicyFilter, pc PolicyContext, d ToolDeclaration, cur string) (v string) {
	defer func() {
		if recover() != nil {
			v = ActionForbidden
		}
	}()
	return f(ctx, pc, d, cur)
}
