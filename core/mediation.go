package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// PlanKind is the kind of I/O a plan asks for.
type PlanKind string

// Plan kinds.
const (
	PlanSkip    PlanKind = "skip"    // the step is stale or its run finished: acknowledge and drop it
	PlanModel            = "model"   // call the model with Model, then Apply ModelReplied
	PlanTool             = "tool"    // execute Tool, then Apply ToolExecuted
	PlanApply            = "apply"   // no I/O: Apply Input directly
	PlanCompact          = "compact" // summarize Compaction (Summarizer, or else the model call Compaction.Model), then Apply Compacted
)

// Plan is the I/O a step needs.
type Plan struct {
	Kind       PlanKind
	Reason     string
	Model      *ModelRequest
	Tool       *ToolCall
	Input      Input
	Compaction *CompactionRequest
	// Recall is a PlanRecall's recall (recall.go).
	Recall *RecallRequest
	// InputRedacted counts the messages of Model.Messages the input
	// guardrail redacted; Perform passes it on in ModelReplied, whose
	// transition reports it with a guardrail_redacted event.
	InputRedacted int
}

// Plan tells the runner what a scheduled step needs. It never changes st.
// transcript is the session transcript in sequence order.
func (m *Machine) Plan(ctx context.Context, st RunState, transcript []Message, step Step) (Plan, error) {
	return m.plan(ctx, &st, transcript, step)
}

// plan is Plan on the state st points to, which it does not change (the
// Runner plans on its run's state without copying it).
func (m *Machine) plan(ctx context.Context, st *RunState, transcript []Message, step Step) (Plan, error) {
	if step.RunID != st.RunID {
		return Plan{}, invalid("step for run %q applied to run %q", step.RunID, st.RunID)
	}
	if IsTerminal(st.Status) {
		return Plan{Kind: PlanSkip, Reason: "run is finished (" + string(st.Status) + ")"}, nil
	}
	switch step.Kind {
	case StepModelTurn:
		if step.Seq != st.ModelStep || st.ModelStep == 0 {
			return Plan{Kind: PlanSkip, Reason: fmt.Sprintf("stale model_turn step %d", step.Seq)}, nil
		}
		if r := recallPlan(st, transcript); r != nil {
			return Plan{Kind: PlanRecall, Recall: r}, nil
		}
		if p := st.Config.Compaction; p.active() && st.CompactTurn != st.Turn+1 {
			if compact, through, retained, ok := compactionPlan(p, compactedView(transcript, st.index)); ok {
				return Plan{Kind: PlanCompact, Compaction: &CompactionRequest{RunID: st.RunID, Messages: compact, Through: through, Retained: retained,
					Model: summaryRequest(st, p, compact)}}, nil
			}
		}
		view, trim := st.modelView(transcript)
		redacted := 0
		if g := m.Guardrails.Input; g != nil {
			seen := append([]Message(nil), view...)
			gctx := st.guardrailContext(ctx)
			res := checkGuardrail(func() GuardrailResult { return g(gctx, seen) })
			if !res.Allowed {
				return Plan{Kind: PlanApply, Input: GuardrailDenied{Step: step, Kind: "input", Reason: res.Reason}}, nil
			}
			view, redacted = redactView(view, res.Redactions)
		}
		system := st.Config.System
		if st.Config.Memory != nil {
			view, system = st.memoryContext(view, system)
		}
		req := newOf(st.arena, arenaRequests)
		*req = ModelRequest{
			RunID: st.RunID, SessionID: st.SessionID, Turn: st.Turn + 1, Model: st.Config.Model, AgentVersion: st.Config.AgentVersion,
			System: system, Messages: view, Tools: st.visibleTools(),
			ParallelToolCalls: st.Config.ParallelToolCalls, Trim: trim,
		}
		return Plan{Kind: PlanModel, InputRedacted: redacted, Model: req}, nil
	case StepToolCall:
		_, c := st.call(step.CallID)
		if c == nil || c.StepSeq != step.Seq || (c.Status != CallPending && c.Status != CallApproved) {
			return Plan{Kind: PlanSkip, Reason: fmt.Sprintf("stale tool_call step %d", step.Seq)}, nil
		}
		if st.NeedsRecorded(step) && st.recorded == nil {
			return Plan{}, invalid("run %s was planned without the recorded calls its tool mode answers from", st.RunID)
		}
		return m.mediate(ctx, st, transcript, step, c), nil
	default:
		return Plan{}, invalid("unknown step kind %q", step.Kind)
	}
}

// mediate decides one call: find the declaration, prevent duplicates,
// validate parameters, resolve the action policy, consult the pre-tool
// mediator, and either pause, answer synthetically or execute.
func (m *Machine) mediate(ctx context.Context, st *RunState, transcript []Message, step Step, c *CallState) Plan {
	decided := func(d Decision) Plan {
		return Plan{Kind: PlanApply, Input: ToolDecided{Step: step, Decision: d}}
	}
	fail := func(errType, msg string, meta map[string]any) Plan {
		return decided(Decision{Kind: DecideResult, Result: ToolResult{Success: false, ToolName: c.Name, Error: msg, ErrorType: errType, Metadata: meta}})
	}
	decl, ok := st.Tool(c.Name)
	if ok && slices.Contains(st.Config.Policy.Deny, c.Name) {
		return fail(ErrTypeForbidden, fmt.Sprintf("Tool '%s' is denied by the runtime policy", c.Name), nil)
	}
	if !ok || !st.isVisible(c.Name) {
		return fail(ErrTypeToolNotFound, fmt.Sprintf("Tool '%s' not found", c.Name), nil)
	}
	if c.Remote != nil {
		// The call's remote task was sent: its later steps follow it
		// (and send the client's answers) without being mediated again.
		return Plan{Kind: PlanTool, Tool: toolCall(st, c, decl)}
	}
	if !c.Approved {
		if !decl.Repeatable() {
			if turn, dup := findAnsweredDuplicate(st, transcript, c); dup {
				return decided(Decision{Kind: DecideResult, Duplicate: true, Result: ToolResult{
					Success: false, ToolName: c.Name, ErrorType: ErrTypeDuplicateToolCall,
					Error: fmt.Sprintf("Duplicate tool call: '%s' was already called with these exact parameters in this run (turn %d) and its result is above. Do not call it again with the same parameters; use that result, or change the parameters if you need something different.", c.Name, turn),
				}})
			}
		}
		prob, err := validateCompiled(decl.Parameters, decl.compiled, c.Parameters)
		if err != nil {
			return fail(ErrTypeInvalidParameters, fmt.Sprintf("Tool '%s' has an unusable parameter schema: %v", c.Name, err), nil)
		}
		if prob != nil && len(prob.Missing) > 0 {
			missing := make([]any, len(prob.Missing))
			for i, s := range prob.Missing {
				missing[i] = s
			}
			return fail(ErrTypeMissingParameters, fmt.Sprintf("Tool '%s' is missing required parameters: %s", c.Name, strings.Join(prob.Missing, ", ")), map[string]any{"missing_parameters": missing})
		}
		if prob != nil {
			return fail(ErrTypeInvalidParameters, fmt.Sprintf("Tool '%s' parameters are invalid: %s", c.Name, prob.Detail), nil)
		}
		if g := m.Guardrails.Tool; g != nil {
			gctx := st.guardrailContext(ctx)
			if res := checkGuardrail(func() GuardrailResult { return g(gctx, c.Name, cloneObject(c.Parameters)) }); !res.Allowed {
				return fail(ErrTypeGuardrailDenied, "Tool denied by guardrail: "+res.Reason, nil)
			}
		}
		policy, level := m.ResolveActionPolicy(ctx, st.policyContext(), decl, st.Config.Policy)
		if policy == ActionForbidden {
			return fail(ErrTypeForbidden, fmt.Sprintf("Tool '%s' is forbidden by the action policy (%s)", c.Name, level), map[string]any{"action_policy_level": level})
		}
		// A fork's call the source made gets its recorded result before
		// anyone is asked: no approver, no client, no execution.
		if d, ok := st.fromRecord(transcript, c, decl); ok {
			return decided(d)
		}
		if policy == ActionPreview {
			return decided(Decision{Kind: DecideAwaitApproval})
		}
	}
	complete := false
	if m.PreToolMediator != nil {
		var prior []ToolResult
		for _, pc := range st.Calls {
			if pc.Result != nil {
				prior = append(prior, *pc.Result)
			}
		}
		d := callMediator(ctx, m.PreToolMediator, MediationContext{
			RunID: st.RunID, Turn: st.Turn, ToolName: c.Name, ToolCallID: c.ID,
			Parameters: cloneObject(c.Parameters), Declaration: decl, Principal: st.Config.Principal, Messages: transcript, PriorMediated: prior,
		})
		switch d.Action {
		case "", MediatorProceed:
			complete = d.Complete
		case MediatorReject:
			msg := d.Error
			if msg == "" {
				msg = fmt.Sprintf("Tool call '%s' rejected by the pre-tool mediator", c.Name)
			}
			et, _ := d.Metadata[MetaErrorType].(string)
			if et == "" {
				et = ErrTypeMediatorRejected
			}
			return decided(Decision{Kind: DecideResult, Complete: d.Complete, Result: ToolResult{
				Success: false, ToolName: c.Name, Error: msg, ErrorType: et, Metadata: cloneObject(d.Metadata),
			}})
		case MediatorReplaceResult:
			res := NormalizeToolOutput(decl, d.Result, nil)
			return decided(Decision{Kind: DecideResult, Complete: d.Complete, Result: res})
		default:
			return fail(ErrTypeMediatorRejected, fmt.Sprintf("pre-tool mediator returned unknown action %q", d.Action), nil)
		}
	}
	if decl.IsClient() {
		return decided(Decision{Kind: DecideAwaitClient, Complete: complete})
	}
	if decl.Executor == ExecutorAgent {
		if res := depthExceeded(st, decl); res != nil {
			return decided(Decision{Kind: DecideResult, Complete: complete, Result: *res})
		}
	}
	return Plan{Kind: PlanTool, Tool: toolCall(st, c, decl)}
}

// toolCall prepares call c for its executor.
func toolCall(st *RunState, c *CallState, decl ToolDeclaration) *ToolCall {
	call := newOf(st.arena, arenaCalls)
	*call = ToolCall{
		RunID: st.RunID, SessionID: st.SessionID, Agent: st.Config.Agent, Turn: st.Turn, ToolCallID: c.ID, ToolName: c.Name,
		Parameters: cloneObject(c.Parameters), IdempotencyKey: IdempotencyKey(st.RunID, c.ID), Declaration: decl,
		Principal: st.Config.Principal, Remote: c.Remote.clone(),
	}
	if decl.Executor == ExecutorMemory {
		call.Memory, call.RunStarted, call.AgentVersion = st.Config.Memory, st.CreatedAt, st.Config.AgentVersion
	}
	return call
}

// IdempotencyKey is the key a server tool execution carries.
func IdempotencyKey(runID, toolCallID string) string { return runID + ":" + toolCallID }

// Key is the call's idempotency key: the one it carries, else its run's
// and call's (IdempotencyKey).
func (c ToolCall) Key() string {
	if c.IdempotencyKey != "" {
		return c.IdempotencyKey
	}
	return IdempotencyKey(c.RunID, c.ToolCallID)
}

// findAnsweredDuplicate looks in this run's transcript for an earlier call
// to the same tool with the same canonical parameters that has a result.
// The transcript index, when the state has one, skips the scan unless it
// holds such a call.
func findAnsweredDuplicate(st *RunState, transcript []Message, c *CallState) (int, bool) {
	if st.index != nil && !st.index.mayHaveAnswered(transcript, st.FirstMsgSeq, c) {
		return 0, false
	}
	want, err := CanonicalJSON(c.Parameters)
	if err != nil {
		return 0, false
	}
	// With parallel calls, siblings of the same turn never count: which of
	// them finishes first must not change the outcome.
	current := map[string]bool{}
	if st.Config.ParallelToolCalls {
		for _, sc := range st.Calls {
			current[sc.ID] = true
		}
	}
	answered := map[string]bool{}
	for _, msg := range transcript {
		if msg.Seq >= st.FirstMsgSeq && msg.Role == RoleToolResult {
			answered[msg.ToolCallID()] = true
		}
	}
	for _, msg := range transcript {
		if msg.Seq < st.FirstMsgSeq || msg.Role != RoleToolCall || msg.ToolName() != c.Name || msg.ToolCallID() == c.ID || current[msg.ToolCallID()] {
			continue
		}
		if !answered[msg.ToolCallID()] {
			continue
		}
		got, err := CanonicalJSON(msg.Metadata[MetaParameters])
		if err == nil && string(got) == string(want) {
			turn, _ := intOf(msg.Metadata[MetaTurn])
			return int(turn), true
		}
	}
	return 0, false
}
