package core

// Hooks are caller code that the machine and the runners call: the
// pre-tool mediator, the completion policy, guardrails, the summarizer
// and context compactor, and the tool visibility and action policy hooks.
// Each is called through one of the wrappers below, so that a hook's panic
// never escapes into a transition: it becomes the wrapper's documented
// fallback answer instead.

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

// callMediator calls the pre-tool mediator; a panic rejects the call.
func callMediator(ctx context.Context, f PreToolMediator, mc MediationContext) MediatorDecision {
	return guard(func() MediatorDecision { return f(ctx, mc) }, func(r any) MediatorDecision {
		return MediatorDecision{Action: MediatorReject, Error: fmt.Sprintf("pre-tool mediator panicked: %v", r)}
	})
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

// callCompletion calls the completion policy; a panic is no decision.
func callCompletion(ctx context.Context, f CompletionPolicy, cc CompletionContext) CompletionDecision {
	return guard(func() CompletionDecision { return f(ctx, cc) }, func(any) CompletionDecision { return CompletionDecision{} })
}

// GuardrailResult allows or denies; Reason is required on deny. An
// allowing result may also redact: the machine then uses the redacted
// text in place of what the guardrail checked. A denying result's
// redactions are ignored.
type GuardrailResult struct {
	Allowed bool
	Reason  string
	// Replacement, on an allowing output result, is the reply's content
	// as the transcript commits it (the model's own text is never
	// stored). The tool calls of the reply are not changed.
	Replacement *string
	// Redactions, on an allowing input result, replace the content of
	// messages of the model's view, keyed by their index in the list the
	// hook got. Only the model's view of this turn changes: the stored
	// transcript keeps what was committed. Indexes out of range and
	// tool_call messages are ignored.
	Redactions map[int]string
}

// Allow is the allowing result.
func Allow() GuardrailResult { return GuardrailResult{Allowed: true} }

// Deny denies with a reason.
func Deny(reason string) GuardrailResult { return GuardrailResult{Reason: reason} }

// RedactOutput allows an output with its content replaced by text.
func RedactOutput(text string) GuardrailResult {
	return GuardrailResult{Allowed: true, Replacement: &text}
}

// Guardrails are the three §13.4 hooks. A hook that panics denies.
// Redaction (GuardrailResult.Replacement and Redactions) applies to the
// input and output hooks; the tool hook allows or denies.
type Guardrails struct {
	Input  func(ctx context.Context, msgs []Message) GuardrailResult
	Output func(ctx context.Context, msg Message) GuardrailResult
	Tool   func(ctx context.Context, name string, args map[string]any) GuardrailResult
}

// GuardrailScope identifies the run a guardrail checks. The machine puts
// it in the context it passes to the guardrails; GuardrailScopeFrom reads
// it back.
type GuardrailScope struct {
	RunID, SessionID, Agent string
	// Tenant is the run's principal's tenant; empty when the run has no
	// principal.
	Tenant string
}

type guardrailScopeKey struct{}

// guardrailContext is ctx carrying the run's GuardrailScope.
func (st *RunState) guardrailContext(ctx context.Context) context.Context {
	sc := GuardrailScope{RunID: st.RunID, SessionID: st.SessionID, Agent: st.Config.Agent}
	if p := st.Config.Principal; p != nil {
		sc.Tenant = p.Tenant
	}
	return context.WithValue(ctx, guardrailScopeKey{}, sc)
}

// GuardrailScopeFrom returns the scope of the run a guardrail was called
// for (the zero scope outside a guardrail call).
func GuardrailScopeFrom(ctx context.Context) GuardrailScope {
	sc, _ := ctx.Value(guardrailScopeKey{}).(GuardrailScope)
	return sc
}

// checkGuardrail calls a guardrail; a panic denies, and a denial without
// a reason gets one.
func checkGuardrail(f func() GuardrailResult) GuardrailResult {
	res := guard(f, func(r any) GuardrailResult { return Deny(fmt.Sprintf("guardrail panicked: %v", r)) })
	if !res.Allowed {
		if strings.TrimSpace(res.Reason) == "" {
			res.Reason = "no reason given"
		}
		res.Replacement, res.Redactions = nil, nil
	}
	return res
}

// redactView returns view with the input guardrail's redactions applied
// (a new slice; view is not changed) and how many messages changed.
func redactView(view []Message, redactions map[int]string) ([]Message, int) {
	if len(redactions) == 0 {
		return view, 0
	}
	out := append([]Message(nil), view...)
	n := 0
	for i := range out {
		text, ok := redactions[i]
		if !ok || out[i].Role == RoleToolCall || out[i].Content == text {
			continue
		}
		out[i].Content = text
		n++
	}
	return out, n
}

// Summarizer condenses older messages for compaction. It is optional
// caller code: when set it writes every summary, in place of the summary
// model call (CompactionPolicy.Model or the run's model) that core
// plans otherwise.
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

// safeSummarize calls a summarizer; a panic is an error.
func safeSummarize(ctx context.Context, s Summarizer, req SummaryRequest) (string, error) {
	return guardErr(func() (string, error) { return s.Summarize(ctx, req) }, func(r any) error { return fmt.Errorf("summarizer panicked: %v", r) })
}

// ContextCompactor is the optional LLM compaction provider of §13.3: it
// writes a better summary of the dropped messages; on error or an empty
// answer the deterministic summary stays.
type ContextCompactor interface {
	CompactContext(ctx context.Context, dropped []Message) (string, error)
}

// safeCompact calls a context compactor; a panic is an error.
func safeCompact(ctx context.Context, c ContextCompactor, dropped []Message) (string, error) {
	return guardErr(func() (string, error) { return c.CompactContext(ctx, dropped) }, func(r any) error { return fmt.Errorf("compactor panicked: %v", r) })
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

// safeFragment calls a tool policy provider; a panic contributes nothing.
func safeFragment(ctx context.Context, f ToolPolicyProvider, pc PolicyContext) PolicyFragment {
	return guard(func() PolicyFragment { return f(ctx, pc) }, func(any) PolicyFragment { return PolicyFragment{} })
}

// ToolAccessChecker is the caller-owned access check; false hides a tool.
type ToolAccessChecker func(ctx context.Context, pc PolicyContext, decl ToolDeclaration) bool

// safeAccess calls the access checker; a panic hides the tool (fail
// closed).
func safeAccess(ctx context.Context, f ToolAccessChecker, pc PolicyContext, d ToolDeclaration) bool {
	return guard(func() bool { return f(ctx, pc, d) }, func(any) bool { return false })
}

// ActionPolicyProvider is a host-provided action policy; "" means no
// opinion.
type ActionPolicyProvider func(ctx context.Context, pc PolicyContext, decl ToolDeclaration) string

// safeActionProvider calls an action policy provider; a panic forbids
// the tool (fail closed).
func safeActionProvider(ctx context.Context, f ActionPolicyProvider, pc PolicyContext, d ToolDeclaration) string {
	return guard(func() string { return f(ctx, pc, d) }, func(any) string { return ActionForbidden })
}

// ActionPolicyFilter is the final say over a resolved action policy.
type ActionPolicyFilter func(ctx context.Context, pc PolicyContext, d ToolDeclaration, resolved string) string

// safeActionFilter calls the action policy filter; a panic forbids the
// tool (fail closed).
func safeActionFilter(ctx context.Context, f ActionPolicyFilter, pc PolicyContext, d ToolDeclaration, cur string) string {
	return guard(func() string { return f(ctx, pc, d, cur) }, func(any) string { return ActionForbidden })
}

// guard calls f and returns its answer; when f panics it returns
// onPanic's answer for the recovered value instead.
func guard[T any](f func() T, onPanic func(r any) T) (out T) {
	defer func() {
		if r := recover(); r != nil {
			out = onPanic(r)
		}
	}()
	return f()
}

// guardErr calls f and returns its answer; when f panics it returns T's
// zero value and the error onPanic makes of the recovered value.
func guardErr[T any](f func() (T, error), onPanic func(r any) error) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			out, err = zero, onPanic(r)
		}
	}()
	return f()
}
