package core

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Apply folds one input into the run and returns the transition's output.
// It never changes st; on error the caller's state is untouched and the
// output is empty.
func (m *Machine) Apply(ctx context.Context, st RunState, transcript []Message, in Input) (Output, error) {
	// The transition and its output's storage come from a pool: nothing
	// the output holds points into it.
	p := transitions.Get().(*applying)
	p.o.State = st
	err := m.apply(ctx, &p.t, &p.o.State, &p.o, transcript, in)
	var out Output
	if err == nil {
		out = p.o
	}
	p.o = Output{}
	transitions.Put(p)
	return out, err
}

// apply folds in into the state st points to (Apply's is o.State, the
// Runner's its run's), whose mutable parts it copies before changing
// them, accumulating the transition's records in o. On error *st and o
// are to be discarded; st.appliesCleanly(in) says beforehand that the
// transition cannot fail. It clears t before it returns.
func (m *Machine) apply(ctx context.Context, t *transition, st *RunState, o *Output, transcript []Message, in Input) error {
	t.m, t.now, t.transcript = m, m.Clock.Now(), transcript
	st.cloneMutable()
	t.st, t.out = st, o
	defer t.clear()
	s := t.st
	t.countSpent(ctx)
	t.chained, _ = ChainedStep(ctx)
	var err error
	switch in := in.(type) {
	case ModelReplied:
		err = t.modelReplied(ctx, in)
	case *ModelReplied:
		err = t.modelReplied(ctx, *in)
	case *ToolExecuted:
		err = t.toolExecuted(ctx, *in)
	case ModelRetrying:
		err = t.modelRetrying(in)
	case ToolRetrying:
		err = t.toolRetrying(in)
	case Heartbeat:
		err = t.heartbeat(in)
	case StallResend:
		err = t.stallResend(in)
	case CallbackFailed:
		t.emit(EventCallbackFailed, &CallbackFailedData{EventID: in.EventID, Event: in.Event, Attempts: in.Attempts,
			LastStatus: in.LastStatus, LastError: in.LastError})
	case ToolExecuted:
		err = t.toolExecuted(ctx, in)
	case ToolDecided:
		err = t.toolDecided(ctx, in)
	case ClientResult:
		err = t.clientResult(ctx, in)
	case ChildFinished:
		err = t.childFinished(ctx, in)
	case FollowRemote:
		err = t.followRemote(ctx)
	case ApprovalDecision:
		err = t.approval(ctx, in)
	case Expire:
		err = t.expire(ctx)
	case Compacted:
		err = t.compacted(in)
	case MemoryRecalled:
		err = t.memoryRecalled(in)
	case MemoryWritten:
		err = t.memoryWritten(in)
	case GuardrailDenied:
		err = t.guardrailDenied(ctx, in)
	case Steer:
		err = t.steer(in)
	case SetCallback:
		if IsTerminal(s.Status) {
			err = invalid("run %s has ended: its callback cannot change", s.RunID)
		} else {
			s.Config.Callback = in.Callback
		}
	case ToolsDiscovered:
		err = t.toolsDiscovered(ctx, in)
	case Cancel:
		reason := strings.TrimSpace(in.Reason)
		if reason == "" {
			reason = "cancelled by the caller"
		}
		err = t.cancel(ctx, StatusCancelled, ErrTypeCancelled, reason, nil)
	case Interrupt:
		reason := strings.TrimSpace(in.Reason)
		if reason == "" {
			reason = "interrupted"
		}
		meta := cloneObject(in.Metadata)
		if meta == nil {
			meta = map[string]any{}
		}
		meta["action"] = "interrupt"
		if a := strings.TrimSpace(in.Action); a != "" {
			meta["action"] = a
		}
		meta["reason"] = reason
		err = t.cancel(ctx, StatusInterrupted, ErrTypeCancelled, reason, meta)
	case nil:
		err = invalid("nil input")
	default:
		err = invalid("unsupported input %T", in)
	}
	if err != nil {
		if a := t.st.arena; a != nil && t.r == &a.output {
			a.output.lent = false // no output holds it
		}
		return err
	}
	t.settleHold()
	s.Version++
	s.UpdatedAt = t.now
	return nil
}

// applying is a transition with the storage of its output: Apply's come
// from a pool, and the Runner's runs each keep one in their arena.
type applying struct {
	t transition
	o Output
}

// transitions recycles Apply's transitions.
var transitions = sync.Pool{New: func() any { return new(applying) }}

// clear drops t's references, so that a pool or an arena holds none into
// a run through it.
func (t *transition) clear() { *t = transition{} }

// cloneMutable copies the parts of the state a transition mutates, in
// place. The usage is copied on write (Usage).
func (st *RunState) cloneMutable() {
	if len(st.Calls) > 0 {
		st.Calls = append(sliceOf(st.arena, arenaStates, len(st.Calls)), st.Calls...)
	}
	st.Budgets = append([]BudgetState(nil), st.Budgets...)
	st.Cost = st.Cost.clone()
	st.Inbox = append([]InboxMessage(nil), st.Inbox...)
}

// transition is one application of an input (or of a start) to a run: it
// changes its own copy of the run state and accumulates the output. It
// holds no context.Context; the methods that may call a hook take ctx as
// their first parameter.
type transition struct {
	m  *Machine
	st *RunState
	// r holds out's first records (recs).
	r *records
	// now is the machine clock's reading, taken once per transition.
	now time.Time
	out *Output
	// transcript is the session transcript the input was applied to.
	transcript []Message
	// chained is the step of the input when a chaining worker ran it
	// (WithChained), to say so on its events.
	chained Step
	// external marks an outside input (a client result, an approval, a
	// steer, a cancel, an expiry) rather than the outcome of a step.
	external bool
}

// records holds the first events, messages and next step of a
// transition's output, enough for a model turn's or a tool call's, in
// one allocation; the data of its events are allocated apart, as they
// outlive the output. A run's arena lends its transitions one records
// block in turn: the Runner copies an output out before the next.
type records struct {
	events      [4]Event
	messages    [2]Message
	next        [1]Step
	toolResults [1]ToolExecutionResult
	audit       [1]AuditEvent
	// lent marks an arena's block as held by an output the Runner has not
	// copied out yet: a transition applied meanwhile (outside the Runner)
	// allocates its own.
	lent bool
}

func (t *transition) recs() *records {
	if t.r == nil {
		if a := t.st.arena; a != nil && !a.output.lent {
			a.output.lent = true
			t.r = &a.output
		} else {
			t.r = new(records)
		}
	}
	return t.r
}

func (t *transition) emit(typ string, data EventData) {
	ev := Event{Seq: t.st.NextEventSeq, Type: typ, Turn: t.st.Turn, At: t.now, Data: data}
	t.st.NextEventSeq++
	if t.out.Events == nil {
		t.out.Events = t.recs().events[:0]
	}
	t.out.Events = append(t.out.Events, ev)
}

func (t *transition) appendMessage(msg Message) {
	msg.Seq = t.st.NextMsgSeq
	t.st.NextMsgSeq++
	if t.out.Messages == nil {
		t.out.Messages = t.recs().messages[:0]
	}
	t.out.Messages = append(t.out.Messages, msg)
}

// messagesUpdated reports the messages appended since sequence number
// from with a messages_updated event carrying their range, not the
// messages, so the event stays small however long the transcript is.
func (t *transition) messagesUpdated(reason string, from int64) {
	if t.st.NextMsgSeq <= from {
		return
	}
	d := newOf(t.st.arena, arenaUpdates)
	*d = MessagesUpdatedData{Reason: reason, FromSeq: from, ToSeq: t.st.NextMsgSeq - 1}
	t.emit(EventMessagesUpdated, d)
}

// scheduleCall schedules a pending call's first tool_call step and
// emits its tool_call_start: the transition that schedules a call is
// committed before the call executes.
func (t *transition) scheduleCall(c *CallState) {
	c.StepSeq = t.schedule(StepToolCall, c.ID)
	d := newOf(t.st.arena, arenaStarts)
	args, _ := c.canonical()
	*d = ToolCallStartData{Name: c.Name, Arguments: args, ToolCallID: c.ID}
	t.emit(EventToolCallStart, d)
}

func (t *transition) schedule(kind StepKind, callID string) int64 {
	t.st.StepSeq++
	seq := t.st.StepSeq
	if t.out.Next == nil {
		t.out.Next = t.recs().next[:0]
	}
	t.out.Next = append(t.out.Next, Step{Kind: kind, Format: StepFormat, RunID: t.st.RunID, Seq: seq, CallID: callID})
	return seq
}

// beginTurn starts the iteration of a planned model_turn step: it checks
// the step is current, counts the turn and drains the inbox's user
// messages the model saw. The turn_started event is stamped started,
// when the model call began, when that is known.
func (t *transition) beginTurn(step Step, started time.Time) error {
	s := t.st
	if IsTerminal(s.Status) {
		return ErrTerminal
	}
	if !s.modelStepCurrent(step) {
		return fmt.Errorf("%w: model_turn %d", ErrStaleStep, step.Seq)
	}
	s.ModelStep = 0
	// The view is needed only to report a trim, which needs a budget.
	var view []Message
	var trim *TrimResult
	if s.Config.ContextBudget > 0 {
		view, trim = s.modelView(t.transcript)
	}
	s.Turn++
	d := newOf(t.st.arena, arenaTurns)
	d.Turn = s.Turn
	d.Chained = t.chained.Kind == StepModelTurn && t.chained.Seq == step.Seq
	t.emit(EventTurnStarted, d)
	if !started.IsZero() && started.Before(t.now) {
		t.out.Events[len(t.out.Events)-1].At = started
	}
	t.drainInbox(view, trim)
	return nil
}

// drainInbox appends the inbox's user messages at the top of an iteration
// and reports the mutations (one messages_updated for each run of
// messages from one source, whose reason is that source), then reports
// whether the model's view was trimmed to the context budget.
func (t *transition) drainInbox(view []Message, trim *TrimResult) {
	s := t.st
	inbox := s.Inbox
	s.Inbox = nil
	steering := 0
	for i := 0; i < len(inbox); {
		from, source := s.NextMsgSeq, inbox[i].Source
		for ; i < len(inbox) && inbox[i].Source == source; i++ {
			t.appendMessage(inboxMessage(inbox[i]))
		}
		t.messagesUpdated(source, from)
		if source == MessagesSteering {
			steering += int(s.NextMsgSeq - from)
		}
	}
	if steering > 0 {
		t.emit(EventStatus, &StatusData{Message: fmt.Sprintf("Injected %d steering message(s)", steering)})
	}
	if trim != nil {
		t.emit(EventMessagesUpdated, &ContextTrimmedData{Reason: MessagesContextTrimmed, Dropped: len(trim.Dropped), Kept: len(view), Budget: s.Config.ContextBudget})
	}
}

func (t *transition) modelReplied(ctx context.Context, in ModelReplied) error {
	s := t.st
	if err := t.beginTurn(in.Step, in.StartedAt); err != nil {
		return err
	}
	if in.InputRedacted > 0 {
		t.emit(EventGuardrailRedacted, &GuardrailRedactedData{Guardrail: "input", Messages: in.InputRedacted})
	}
	if in.Err != nil {
		t.fail(ctx, "model_error", in.Err.Error())
		return nil
	}
	// The reply's tokens were spent whatever the output guardrail says of
	// it, so they are counted before it is consulted.
	s.Usage.Add(in.Reply.Usage)
	t.countModelCost(in.Reply.Usage)
	if len(in.Reply.RequestMetadata) > 0 {
		s.RequestMetadata = in.Reply.RequestMetadata
	}
	if b := s.budget(BudgetTurns); b != nil {
		b.Current++
	}
	if b := s.budget(BudgetTotalTokens); b != nil {
		b.Current = int(s.Usage.Number("total_tokens"))
	}
	content := in.Reply.Content
	if g := t.m.Guardrails.Output; g != nil {
		msg := assistantView(in.Reply)
		gctx := s.guardrailContext(ctx)
		res := checkGuardrail(func() GuardrailResult { return g(gctx, msg) })
		if !res.Allowed {
			t.deniedTurnBudget()
			t.guardrailFail(ctx, "output", res.Reason)
			return nil
		}
		// Redaction happens before the commit: the model's own text is
		// never stored, and the event does not carry it.
		if res.Replacement != nil && *res.Replacement != content {
			content = *res.Replacement
			t.emit(EventGuardrailRedacted, &GuardrailRedactedData{Guardrail: "output"})
		}
	}
	from := s.NextMsgSeq
	if strings.TrimSpace(content) != "" {
		t.appendMessage(Message{Role: RoleAssistant, Content: content, Metadata: map[string]any{MetaTurn: s.Turn}})
	}
	if len(in.Reply.ToolCalls) == 0 {
		t.messagesUpdated(MessagesModelReply, from)
		t.finish(StatusCompleted)
		return nil
	}
	used := map[string]bool{}
	indexed := s.index != nil && s.index.describes(t.transcript)
	if !indexed {
		for _, msg := range t.transcript {
			if id := msg.ToolCallID(); id != "" {
				used[id] = true
			}
		}
	}
	inTranscript := func(id string) bool { return indexed && s.index.hasID(id) }
	s.Calls = sliceOf(s.arena, arenaStates, len(in.Reply.ToolCalls))
	for i, rc := range in.Reply.ToolCalls {
		id := strings.TrimSpace(rc.ID)
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", s.Turn, i+1)
		}
		base := id
		for n := 2; used[id] || inTranscript(id); n++ {
			id = base + "_" + strconv.Itoa(n)
		}
		used[id] = true
		params := rc.Parameters
		if params == nil {
			params = map[string]any{}
		}
		name := strings.TrimSpace(rc.Name)
		s.Calls = append(s.Calls, CallState{ID: id, Name: name, Parameters: params, Status: CallPending})
		idV, nameV := s.Calls[len(s.Calls)-1].boxes()
		t.appendMessage(Message{Role: RoleToolCall, Metadata: map[string]any{
			MetaToolCallID: idV, MetaToolName: nameV, MetaParameters: params, MetaTurn: s.Turn,
		}})
		// The event shares the call's parameters (as its message does)
		// unless some are to be redacted.
		evParams := params
		if _, redacted := s.Calls[len(s.Calls)-1].canonical(); redacted {
			evParams = RedactedParameters(params)
		}
		d := newOf(t.st.arena, arenaToolCalls)
		*d = ToolCallData{ToolName: name, ToolCallID: id, Parameters: evParams}
		t.emit(EventToolCall, d)
	}
	t.messagesUpdated(MessagesModelReply, from)
	if b := t.costExceeded(); b != nil {
		// The spend cap is a hard stop: the reply's calls do not run.
		t.tripBudget(b)
		t.closeOpen("budget " + b.Name + " exceeded")
		t.settle(ctx)
		return nil
	}
	if s.Config.ParallelToolCalls {
		for i := range s.Calls {
			t.scheduleCall(&s.Calls[i])
		}
	}
	t.settle(ctx)
	return nil
}

// currentStep checks that step is the run's current model_turn step or a
// current tool_call step, without claiming it.
func (t *transition) currentStep(step Step) error {
	s := t.st
	if IsTerminal(s.Status) {
		return ErrTerminal
	}
	if s.modelStepCurrent(step) || s.toolStepCall(step) != nil {
		return nil
	}
	return fmt.Errorf("%w: %s %d", ErrStaleStep, step.Kind, step.Seq)
}

// modelRetrying records an in-process retry of the current model call.
// The step stays current and the status unchanged.
func (t *transition) modelRetrying(in ModelRetrying) error {
	if in.Step.Kind != StepModelTurn {
		return invalid("model_retry for a %s step", in.Step.Kind)
	}
	if err := t.currentStep(in.Step); err != nil {
		return err
	}
	r := in.Retry
	t.emit(EventModelRetry, &ModelRetryData{Provider: r.Provider, Attempt: r.Attempt, Status: r.Status, Code: r.Code, Wait: r.Wait.String()})
	// The event belongs to the turn the call is for, which beginTurn
	// counts only when the reply is applied.
	t.out.Events[len(t.out.Events)-1].Turn = t.st.Turn + 1
	return nil
}

// toolRetrying records that the current tool step's call failed
// transiently and runs again on the step's next delivery.
func (t *transition) toolRetrying(in ToolRetrying) error {
	if in.Step.Kind != StepToolCall {
		return invalid("tool_retry for a %s step", in.Step.Kind)
	}
	if err := t.currentStep(in.Step); err != nil {
		return err
	}
	_, c := t.st.call(in.Step.CallID)
	if c == nil {
		return fmt.Errorf("%w: no call %q", ErrNothingToApply, in.Step.CallID)
	}
	r := in.Retry
	d := &ToolRetryData{ToolCallID: c.ID, ToolName: c.Name, Attempt: r.Attempt, Attempts: r.Attempts, Reason: truncateUTF8(r.Reason, 500)}
	if r.Wait > 0 {
		d.Wait = r.Wait.String()
	}
	t.emit(EventToolRetry, d)
	return nil
}

// stallResend schedules the run's steps again when they have not moved
// for in.StallAfter.
func (t *transition) stallResend(in StallResend) error {
	s := t.st
	if IsTerminal(s.Status) {
		return ErrTerminal
	}
	due, ok := s.StallDue(in.Stall)
	if !ok || t.now.Before(due) {
		return ErrNothingToApply
	}
	t.out.Next, s.Held = s.ScheduledSteps(), 0
	return nil
}

// heartbeat records that the current step's I/O is still running.
func (t *transition) heartbeat(in Heartbeat) error {
	return t.currentStep(in.Step)
}

func assistantView(r ModelReply) Message {
	m := Message{Role: RoleAssistant, Content: r.Content}
	if len(r.ToolCalls) > 0 {
		calls := make([]any, len(r.ToolCalls))
		for i, c := range r.ToolCalls {
			calls[i] = map[string]any{"id": c.ID, "name": c.Name, "parameters": paramsValue(cloneObject(c.Parameters))}
		}
		m.Metadata = map[string]any{"tool_calls": calls}
	}
	return m
}

func (t *transition) guardrailDenied(ctx context.Context, in GuardrailDenied) error {
	if err := t.beginTurn(in.Step, time.Time{}); err != nil {
		return err
	}
	t.guardrailFail(ctx, in.Kind, in.Reason)
	return nil
}

// deniedTurnBudget is the budget check of a turn whose reply the output
// guardrail denied. The run ends with that turn, so the check that
// otherwise runs before the next turn runs now: when the turn's tokens
// took total_tokens to its ceiling, the budget trips (a budget_exceeded
// event, and the envelope's budget names it) before the guardrail fails
// the run. The run's status and error stay the guardrail's.
func (t *transition) deniedTurnBudget() {
	if b := t.st.budget(BudgetTotalTokens); b != nil && b.Exceeded() {
		t.tripBudget(b)
	}
}

func (t *transition) guardrailFail(ctx context.Context, kind, reason string) {
	msg := fmt.Sprintf("%s guardrail denied: %s", strings.ToUpper(kind[:1])+kind[1:], reason)
	t.emit(EventError, &ErrorData{Message: msg, Guardrail: kind})
	t.fail(ctx, "guardrail", msg)
}

func (t *transition) compacted(in Compacted) error {
	s := t.st
	if IsTerminal(s.Status) {
		return ErrTerminal
	}
	if in.Step.Kind != StepModelTurn || in.Step.Seq != s.ModelStep || s.ModelStep == 0 {
		return fmt.Errorf("%w: compaction for model_turn %d", ErrStaleStep, in.Step.Seq)
	}
	s.CompactTurn = s.Turn + 1
	compact, through, retained, ok := compactionPlan(s.Config.Compaction, compactedView(t.transcript, s.index))
	if !ok {
		return fmt.Errorf("%w: nothing to compact", ErrStaleStep)
	}
	t.emit(EventCompactionStarted, &CompactionStartedData{Messages: len(compact), CompactedThrough: through})
	usage := t.countSummaryUsage(in.Usage)
	// provider and model name the model that wrote (or failed to write)
	// the summary.
	var provider, model string
	if in.Model != nil {
		provider, model = in.Model.Provider, in.Model.Model
	}
	summary := strings.TrimSpace(in.Summary)
	switch {
	case in.Err != nil || summary == "":
		msg := "the summarizer returned an empty summary"
		if in.Err != nil {
			msg = in.Err.Error()
		}
		t.emit(EventCompactionFailed, &CompactionFailedData{Error: msg, TranscriptPreserved: true, Provider: provider, Model: model, Usage: usage})
	default:
		d := &CompactionCompletedData{Status: "compacted", CompactedThrough: through, CompactedCount: len(compact), RetainedCount: retained,
			SummaryChars: utf8.RuneCountInString(summary), Provider: provider, Model: model, Usage: usage}
		meta := map[string]any{"status": d.Status, "compacted_through": through, "compacted_count": d.CompactedCount, "retained_count": retained, "summary_chars": d.SummaryChars}
		from := s.NextMsgSeq
		t.appendMessage(Message{Role: RoleUser, Content: "[Conversation summary: " + summary + "]", Metadata: map[string]any{MetaSource: "compaction", MetaCompaction: meta}})
		t.emit(EventCompactionCompleted, d)
		t.messagesUpdated(MessagesCompaction, from)
	}
	if b := s.budget(BudgetTotalTokens); b != nil && b.Exceeded() {
		t.tripBudget(b)
		t.finish(StatusBudgetExceeded)
		return nil
	}
	if b := t.costExceeded(); b != nil {
		t.tripBudget(b)
		t.finish(StatusBudgetExceeded)
		return nil
	}
	s.ModelStep = t.schedule(StepModelTurn, "")
	t.setActiveStatus()
	return nil
}

// UsageCompaction is the key of the run's usage line that counts its
// compaction summary calls; the run's summed totals include them.
const UsageCompaction = "compaction"

// countSummaryUsage adds a summary call's usage to the run's totals, to
// its compaction line and to the total_tokens budget, and returns the
// call's usage as counted (nil when the call reported none).
func (t *transition) countSummaryUsage(u map[string]any) map[string]any {
	if len(u) == 0 {
		return nil
	}
	s := t.st
	var call Usage
	call.Add(u)
	if call.IsEmpty() {
		return nil
	}
	counted := call.Map()
	s.Usage.addCompaction(counted)
	t.countModelCost(counted)
	if b := s.budget(BudgetTotalTokens); b != nil {
		b.Current = int(s.Usage.Number("total_tokens"))
	}
	return counted
}

func (t *transition) stepCall(step Step) (*CallState, error) {
	if IsTerminal(t.st.Status) {
		return nil, ErrTerminal
	}
	c := t.st.toolStepCall(step)
	if c == nil {
		return nil, fmt.Errorf("%w: tool_call %d (%s)", ErrStaleStep, step.Seq, step.CallID)
	}
	c.StepSeq = 0
	return c, nil
}

// modelStepCurrent reports whether step is the run's current model_turn
// step.
func (st *RunState) modelStepCurrent(step Step) bool {
	return step.Kind == StepModelTurn && step.Seq == st.ModelStep && st.ModelStep != 0
}

// toolStepCall returns the call that step, when it is a current tool_call
// step, runs (nil: it is not).
func (st *RunState) toolStepCall(step Step) *CallState {
	if step.Kind != StepToolCall {
		return nil
	}
	if _, c := st.call(step.CallID); c != nil && c.StepSeq == step.Seq && (c.Status == CallPending || c.Status == CallApproved) {
		return c
	}
	return nil
}

// appliesCleanly reports whether in is the outcome of one of the run's
// current steps whose transition cannot fail: a model reply to the
// current model_turn step, or a tool's output for a current tool_call
// step (past the checks below, modelReplied and toolExecuted always
// succeed). The Runner applies those to its run's state in place.
func (st *RunState) appliesCleanly(in Input) bool {
	if IsTerminal(st.Status) {
		return false
	}
	switch in := in.(type) {
	case *ModelReplied:
		return st.modelStepCurrent(in.Step)
	case *ToolExecuted:
		return st.toolStepCall(in.Step) != nil
	}
	return false
}

func (t *transition) toolExecuted(ctx context.Context, in ToolExecuted) error {
	c, err := t.stepCall(in.Step)
	if err != nil {
		return err
	}
	decl, _ := t.st.Tool(c.Name)
	res := NormalizeToolOutput(decl, in.Output, in.Err)
	if in.Err != nil {
		t.panicked(c, in.Err)
	}
	t.resolve(c, res)
	if decl.Executor == ExecutorMemory && res.Success {
		t.memoryToolWrote(res.Metadata)
	}
	t.settle(ctx)
	return nil
}

// panicked emits the error event of a tool executor that panicked.
func (t *transition) panicked(c *CallState, err error) {
	var p *ToolPanic
	if errors.As(err, &p) {
		t.emit(EventError, &ErrorData{Message: fmt.Sprintf("Tool '%s' panicked: %v", c.Name, p.Value), ToolName: c.Name, ToolCallID: c.ID})
	}
}

func (t *transition) toolDecided(ctx context.Context, in ToolDecided) error {
	c, err := t.stepCall(in.Step)
	if err != nil {
		return err
	}
	d := in.Decision
	c.Complete = d.Complete
	if opensPending(d.Kind) && t.st.openPending() >= MaxOpenPending {
		d = Decision{Kind: DecideResult, Result: tooManyPending(c.Name)}
	}
	switch d.Kind {
	case DecideResult:
		if d.Duplicate {
			t.emit(EventDuplicateToolCall, &ToolRefData{ToolName: c.Name, ToolCallID: c.ID})
		}
		decl, _ := t.st.Tool(c.Name)
		res := d.Result
		res.ToolName = c.Name
		res.Runtime = mergeRuntime(decl.Runtime, res.Runtime)
		if d.Replayed != nil {
			res.Runtime = nil // the source's run of the tool, not this one's
		}
		c.Replayed = d.Replayed
		t.resolve(c, res)
	case DecideAwaitClient:
		exp := t.now.Add(time.Duration(t.st.Config.PendingTTL))
		c.Status = CallAwaitingClient
		c.RequestID = derivedID("treq", t.st.RunID, c.ID)
		c.ExpiresAt = &exp
		t.emit(EventRuntimeToolPending, &RuntimeToolPendingData{RequestID: c.RequestID, ToolCallID: c.ID, ToolName: c.Name,
			Parameters: RedactedParameters(c.Parameters), ExpiresAt: exp.Format(time.RFC3339Nano)})
	case DecideAwaitApproval:
		exp := t.now.Add(time.Duration(t.st.Config.PendingTTL))
		decl, _ := t.st.Tool(c.Name)
		red := RedactedParameters(c.Parameters)
		c.Status = CallAwaitingApproval
		c.ActionID = derivedID("act", t.st.RunID, c.ID)
		c.ExpiresAt = &exp
		c.Summary = approvalSummary(c.Name, red)
		c.Preview = map[string]any{"tool_name": c.Name, "description": decl.Description, "parameters": red}
		t.emit(EventApprovalRequired, &ApprovalRequiredData{ActionID: c.ActionID, ToolCallID: c.ID, ToolName: c.Name,
			Summary: c.Summary, Parameters: red, ExpiresAt: exp.Format(time.RFC3339Nano)})
	case DecideHandoff:
		if err := t.decideHandoff(c, d.Handoff); err != nil {
			return err
		}
	case DecideAwaitRemote:
		if err := t.awaitRemote(c, d); err != nil {
			return err
		}
	case DecideRemoteInput:
		if err := t.remoteInput(c, d); err != nil {
			return err
		}
	case DecideAwaitChild:
		if d.ChildRunID != ChildRunID(t.st.RunID, c.ID) {
			return invalid("child run %q does not answer call %q", d.ChildRunID, c.ID)
		}
		decl, _ := t.st.Tool(c.Name)
		c.Status = CallAwaitingChild
		c.ChildRunID = d.ChildRunID
		t.child(d.ChildRunID, decl.ChildAgent(), c.ID)
		t.emit(EventChildRunStarted, &ChildRunStartedData{Agent: decl.ChildAgent(), ChildRunID: d.ChildRunID, ToolCallID: c.ID, ToolName: c.Name})
	default:
		return invalid("unknown decision %q", d.Kind)
	}
	t.settle(ctx)
	return nil
}

// MaxOpenPending is how many approvals and client-tool requests a run
// may have open at once. A call that would open one more is not asked:
// it gets a failed result (ErrTypeTooManyPending) the model sees, and can
// make again once some are answered. The cap keeps every commit of the
// run within what a store writes at once (DynamoDB writes a run's open
// items in the commit's transaction, at most 100 items); it is the same
// in every store, so a run behaves the same in baton dev and on AWS.
const MaxOpenPending = 64

// opensPending says whether a decision opens an approval or a client-tool
// request.
func opensPending(k DecisionKind) bool {
	return k == DecideAwaitClient || k == DecideAwaitApproval || k == DecideRemoteInput
}

// openPending counts the run's open approvals and client-tool requests.
func (st *RunState) openPending() int {
	n := 0
	for i := range st.Calls {
		if s := st.Calls[i].Status; s == CallAwaitingClient || s == CallAwaitingApproval {
			n++
		}
	}
	return n
}

// tooManyPending is the result of a call refused by MaxOpenPending.
func tooManyPending(name string) ToolResult {
	return ToolResult{Success: false, ToolName: name, ErrorType: ErrTypeTooManyPending,
		Error:    fmt.Sprintf("Tool '%s' was not called: this run already has %d approvals and client-tool requests waiting, the most it may have open at once. Call it again once some of them are answered.", name, MaxOpenPending),
		Metadata: map[string]any{"max_open_pending": MaxOpenPending}}
}

func approvalSummary(name string, redacted map[string]any) string {
	b, _ := CanonicalJSON(redacted)
	s := fmt.Sprintf("Call %s with %s", name, b)
	if len(s) > 500 {
		s = truncateUTF8(s, 497) + "..."
	}
	return s
}

func (t *transition) clientResult(ctx context.Context, in ClientResult) error {
	t.external = true
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	c, err := t.awaiting(CallAwaitingClient, in.RequestID)
	if err != nil {
		return err
	}
	t.emit(EventRuntimeToolSubmitted, &RuntimeToolSubmittedData{RequestID: c.RequestID, ToolCallID: c.ID, ToolName: c.Name, Success: in.Success})
	if in.Success && c.Remote != nil {
		t.remoteAnswered(c, in)
	} else if in.Success {
		decl, _ := t.st.Tool(c.Name)
		t.resolve(c, NormalizeToolOutput(decl, map[string]any{"success": true, "result": in.Result}, nil))
	} else {
		msg := strings.TrimSpace(in.Error)
		if msg == "" {
			msg = "The client reported that the tool failed"
		}
		t.resolveFailed(c, ErrTypeClientError, msg)
	}
	t.settle(ctx)
	return nil
}

func (t *transition) approval(ctx context.Context, in ApprovalDecision) error {
	t.external = true
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	if in.Decision != "accept" && in.Decision != "reject" {
		return invalid("decision must be \"accept\" or \"reject\", got %q", in.Decision)
	}
	c, err := t.awaiting(CallAwaitingApproval, in.ActionID)
	if err != nil {
		return err
	}
	data := &ApprovalDecidedData{ActionID: c.ActionID, ToolCallID: c.ID, ToolName: c.Name, Decision: in.Decision, Reason: in.Reason}
	c.Approval = &ApprovalRecord{Decision: in.Decision, Resolver: in.Resolver.Resolver()}
	if r := c.Approval.Resolver; r != nil {
		data.Resolver = r.data()
	}
	t.emit(EventApprovalDecided, data)
	if in.Decision == "accept" {
		c.Approved = true
		c.Status = CallApproved
		c.ExpiresAt = nil
		c.StepSeq = t.schedule(StepToolCall, c.ID)
	} else {
		msg := fmt.Sprintf("The approver rejected the call to '%s'", c.Name)
		if r := strings.TrimSpace(in.Reason); r != "" {
			msg += ": " + r
		}
		t.resolveFailed(c, ErrTypeRejected, msg)
	}
	t.settle(ctx)
	return nil
}

func (t *transition) expire(ctx context.Context) error {
	t.external = true
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	n := 0
	for i := range t.st.Calls {
		c := &t.st.Calls[i]
		if (c.Status != CallAwaitingClient && c.Status != CallAwaitingApproval) || c.ExpiresAt == nil || t.now.Before(*c.ExpiresAt) {
			continue
		}
		kind, id, msg := "tool_request", c.RequestID, fmt.Sprintf("The client tool request for '%s' expired before a result was submitted", c.Name)
		if c.Status == CallAwaitingApproval {
			kind, id, msg = "action", c.ActionID, fmt.Sprintf("The approval request for '%s' expired before a decision was made", c.Name)
		}
		t.emit(EventPendingExpired, &PendingExpiredData{Kind: kind, ID: id, ToolCallID: c.ID, ToolName: c.Name})
		t.resolveFailed(c, ErrTypeTimedOut, msg)
		n++
	}
	if n == 0 {
		return ErrNothingToApply
	}
	t.settle(ctx)
	return nil
}

// toolsDiscovered adds the new tools of a ToolsDiscovered to the run's
// catalog, resolving their visibility with the run's policy, and reports
// newly unavailable sources.
func (t *transition) toolsDiscovered(ctx context.Context, in ToolsDiscovered) error {
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	var added []ToolDeclaration
	names := map[string]bool{}
	for _, d := range in.Tools {
		if _, dup := t.st.Tool(d.Name); dup || names[d.Name] || d.IsClient() {
			continue
		}
		names[d.Name] = true
		added = append(added, d)
	}
	var down []ToolSourceFailure
	reported := set(t.st.ToolSourcesDown)
	for _, f := range in.Unavailable {
		if reported[f.Source] {
			continue
		}
		reported[f.Source] = true
		down = append(down, f)
	}
	if len(added) == 0 && len(down) == 0 {
		return ErrNothingToApply
	}
	cfg := &t.st.Config
	if len(added) > 0 {
		cfg.Tools = append(append([]ToolDeclaration(nil), cfg.Tools...), added...)
		visible, hidden := t.m.ResolveVisibleTools(ctx, PolicyContext{RunID: t.st.RunID, Agent: cfg.Agent, Mode: cfg.Policy.mode(), Principal: cfg.Principal}, added, cfg.Policy)
		cfg.Visible = append(append([]string{}, cfg.Visible...), visible...)
		t.st.visible = t.st.resolveVisibleTools()
		all := make([]string, len(added))
		for i, d := range added {
			all[i] = d.Name
		}
		t.emit(EventToolsDiscovered, &ToolsDiscoveredData{Tools: all, Visible: nonNil(visible), Hidden: nonNil(hidden)})
	}
	for _, f := range down {
		t.st.ToolSourcesDown = append(append([]string(nil), t.st.ToolSourcesDown...), f.Source)
		t.emit(EventToolSourceUnavailable, &ToolSourceUnavailableData{Source: f.Source, Error: f.Error})
	}
	return nil
}

func (t *transition) steer(in Steer) error {
	t.external = true
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	content := strings.TrimSpace(in.Content)
	if content == "" {
		return invalid("content must be a non-empty string")
	}
	if utf8.RuneCountInString(in.Content) > MaxSteeringChars {
		return invalid("content is longer than %d characters", MaxSteeringChars)
	}
	t.st.addToInbox(InboxMessage{Source: "steering", Content: in.Content})
	t.emit(EventSteeringQueued, &SteeringQueuedData{Queued: len(t.st.Inbox)})
	return nil
}

func (t *transition) cancel(ctx context.Context, status RunStatus, errType, reason string, interrupted map[string]any) error {
	t.external = true
	s := t.st
	if IsTerminal(s.Status) {
		return ErrTerminal
	}
	if status == StatusInterrupted {
		s.Interrupted = interrupted
		t.emit(EventInterruptReceived, Fields(cloneObject(interrupted)))
	} else {
		t.emit(EventCancelled, &ReasonData{Reason: reason})
	}
	t.closeOpenWith(errType, fmt.Sprintf("Not executed: the run was %s (%s)", status, reason))
	t.settleClosed(ctx)
	s.Inbox = nil
	t.finish(status)
	return nil
}

// awaiting finds the call in status (awaiting a client result or an
// approval) whose request or action id is id, and checks it has not
// expired.
func (t *transition) awaiting(status CallStatus, id string) (*CallState, error) {
	what := "tool request"
	if status == CallAwaitingApproval {
		what = "action"
	}
	var c *CallState
	for i := range t.st.Calls {
		cs := &t.st.Calls[i]
		key := cs.RequestID
		if status == CallAwaitingApproval {
			key = cs.ActionID
		}
		if key == id && cs.Status == status {
			c = cs
		}
	}
	if c == nil {
		return nil, fmt.Errorf("%w: no pending %s %q", ErrNotFound, what, id)
	}
	if !t.now.Before(*c.ExpiresAt) {
		return nil, fmt.Errorf("%w: %s %q expired at %s", ErrExpired, what, id, c.ExpiresAt.Format(time.RFC3339))
	}
	return c, nil
}

// resolveFailed records a failed result of errType with msg for a call.
func (t *transition) resolveFailed(c *CallState, errType, msg string) {
	decl, _ := t.st.Tool(c.Name)
	t.resolve(c, failedResult(c.Name, decl, errType, msg))
}

// resolve records a call's result in the state, capping its size.
func (t *transition) resolve(c *CallState, res ToolResult) {
	res.ToolName = c.Name
	if res.Result != nil {
		if n, ok := canonicalSize(res.Result); ok && n > t.st.Config.ToolResultMaxBytes {
			b, _ := CanonicalJSON(res.Result)
			limit := t.st.Config.ToolResultMaxBytes
			res.Result = map[string]any{
				"truncated":      true,
				"original_bytes": len(b),
				"preview":        truncateUTF8(string(b), limit),
			}
			t.emit(EventToolResultTruncated, &ToolResultTruncatedData{ToolName: c.Name, ToolCallID: c.ID, OriginalBytes: len(b), MaxBytes: limit})
			c.ResultTruncated = true
		}
	}
	c.Status = CallResolved
	c.Result = newOf(t.st.arena, arenaResults)
	*c.Result = res
	c.StepSeq = 0
	c.ExpiresAt = nil
}

// closeOpen gives every call that has no result yet a failed, uncounted
// result, so the transcript never holds a call without a result.
func (t *transition) closeOpen(reason string) {
	t.closeOpenWith(ErrTypeSkipped, fmt.Sprintf("Not executed: the run stopped before this call (%s)", reason))
}

func (t *transition) closeOpenWith(errType, msg string) {
	for i := range t.st.Calls {
		c := &t.st.Calls[i]
		if c.Status == CallDone || c.Status == CallResolved {
			continue
		}
		c.Uncounted = true
		t.resolveFailed(c, errType, msg)
	}
	t.st.ModelStep = 0
}

// settle appends the results that are in, in call order, and decides
// what happens next: another call, a pause, the next turn or the end.
func (t *transition) settle(ctx context.Context) {
	s := t.st
	for i := range s.Calls {
		c := &s.Calls[i]
		if c.Status == CallDone {
			continue
		}
		if c.Status != CallResolved {
			break
		}
		t.record(ctx, c)
		c.Status = CallDone
	}
	allDone := true
	for _, c := range s.Calls {
		if c.Status != CallDone {
			allDone = false
			break
		}
	}
	if allDone {
		s.Calls = nil
		if s.Handoff != nil && s.Stop == nil {
			t.handOver(ctx)
		}
		s.Handoff = nil
		t.advance()
		return
	}
	if !s.Config.ParallelToolCalls {
		for i := range s.Calls {
			c := &s.Calls[i]
			if c.Status == CallDone {
				continue
			}
			if c.Status == CallPending && c.StepSeq == 0 {
				t.scheduleCall(c)
			}
			break
		}
	}
	t.setActiveStatus()
}

// setActiveStatus sets running/queued while steps are in flight, or the
// paused status when only outside inputs can move the run.
func (t *transition) setActiveStatus() {
	inFlight, client, approval := false, false, false
	for _, c := range t.st.Calls {
		switch c.Status {
		case CallPending, CallApproved:
			if c.StepSeq != 0 {
				inFlight = true
			}
		case CallAwaitingClient:
			client = true
		case CallAwaitingApproval:
			approval = true
		}
	}
	switch {
	case inFlight || t.st.ModelStep != 0:
		if t.external {
			t.st.Status = StatusQueued
		} else {
			t.st.Status = StatusRunning
		}
	case approval:
		t.st.Status = StatusApprovalRequired
	case client:
		t.st.Status = StatusRuntimeToolPending
	default:
		t.st.Status = StatusRunning
	}
}

// record appends one call's result to the transcript and the result,
// audit and event records, counts budgets and consults the completion
// policy.
func (t *transition) record(ctx context.Context, c *CallState) {
	s := t.st
	res := *c.Result
	decl, _ := s.Tool(c.Name)
	idV, nameV := c.boxes()
	meta := map[string]any{MetaToolCallID: idV, MetaToolName: nameV, MetaSuccess: res.Success, MetaTurn: s.Turn}
	if res.ErrorType != "" {
		meta[MetaErrorType] = res.ErrorType
	}
	if c.Replayed != nil {
		meta[MetaReplayed], meta[MetaReplayedFrom] = true, *c.Replayed
	}
	seq := s.NextMsgSeq
	t.appendMessage(Message{Role: RoleToolResult, Content: resultText(res), Metadata: meta})
	if t.out.ToolResults == nil {
		t.out.ToolResults = t.recs().toolResults[:0]
		t.out.Audit = t.recs().audit[:0]
	}
	t.out.ToolResults = append(t.out.ToolResults, ToolExecutionResult{
		ToolName: c.Name, ToolCallID: c.ID, Parameters: c.Parameters, Result: res,
		Runtime: res.Runtime, TurnCount: s.Turn, Seq: seq, ReplayedFrom: c.Replayed,
	})
	ae := auditEvent(s.Turn, decl, c, res)
	ae.Seq = seq
	t.out.Audit = append(t.out.Audit, ae)
	text, cut := eventResult(res, c.ResultTruncated, min(s.Config.ToolResultMaxBytes, EventResultMaxBytes))
	d := newOf(t.st.arena, arenaToolResults)
	*d = ToolResultData{Name: c.Name, ToolName: c.Name, ToolCallID: c.ID, Success: res.Success, ErrorType: res.ErrorType, Result: text, ResultTruncated: cut,
		Replayed: c.Replayed != nil, Chained: t.chained.Kind == StepToolCall && t.chained.CallID == c.ID}
	t.emit(EventToolResult, d)
	t.messagesUpdated(MessagesToolResult, seq)
	if c.Uncounted || s.Stop != nil {
		return
	}
	for _, name := range []string{BudgetToolCalls, budgetToolPrefix + c.Name} {
		// A replayed result executed nothing: it counts against no
		// tool-call budget.
		if b := s.budget(name); b != nil && c.Replayed == nil {
			b.Current++
			if b.Exceeded() && s.Stop == nil {
				t.tripBudget(b)
			}
		}
	}
	if b := t.costExceeded(); b != nil && s.Stop == nil {
		t.tripBudget(b)
	}
	if s.Stop != nil {
		t.closeOpen("budget " + s.Budget + " exceeded")
		return
	}
	if c.Complete {
		s.Stop = &stop{Status: StatusCompleted, Reason: "pre_tool_mediator"}
		t.emit(EventMediatorComplete, &ToolRefData{ToolName: c.Name, ToolCallID: c.ID})
		t.closeOpen("the pre-tool mediator completed the run")
		return
	}
	if t.m.CompletionPolicy != nil {
		d := callCompletion(ctx, t.m.CompletionPolicy, CompletionContext{RunID: s.RunID, Turn: s.Turn, ToolName: c.Name, ToolCallID: c.ID, Result: res})
		data := &CompletionPolicyData{ToolName: c.Name, Turn: s.Turn, Message: d.Message}
		if len(d.Context) > 0 {
			data.Context = cloneObject(d.Context)
		}
		if d.Complete {
			s.Stop = &stop{Status: StatusCompleted, Reason: "completion_policy"}
			t.emit(EventCompletionPolicyStop, data)
		} else if strings.TrimSpace(d.Message) != "" {
			s.addToInbox(InboxMessage{Source: "completion_policy", Content: d.Message})
			t.emit(EventCompletionPolicyContinue, data)
		}
	}
}

func (t *transition) tripBudget(b *BudgetState) {
	t.st.Stop = &stop{Status: StatusBudgetExceeded, Reason: "budget " + b.Name}
	t.st.Budget = b.Name
	if b.Name == BudgetCostUSD {
		t.emit(EventBudgetExceeded, &BudgetExceededData{Budget: b.Name, Current: b.CurrentUSD, Ceiling: b.CeilingUSD})
		return
	}
	t.emit(EventBudgetExceeded, &BudgetExceededData{Budget: b.Name, Current: float64(b.Current), Ceiling: float64(b.Ceiling)})
}

// advance runs between turns: it ends the run when a stop was requested,
// max_turns is reached or a turn budget trips, and otherwise schedules the
// next model turn.
func (t *transition) advance() {
	s := t.st
	if s.Stop != nil {
		t.finish(s.Stop.Status)
		return
	}
	if b := s.budget(BudgetTurns); b != nil {
		if b.Exceeded() {
			t.tripBudget(b)
			t.finish(StatusBudgetExceeded)
			return
		}
	} else if s.Turn >= s.Config.MaxTurns {
		t.emit(EventMaxTurnsReached, &MaxTurnsReachedData{MaxTurns: s.Config.MaxTurns, TurnCount: s.Turn})
		t.finish(StatusMaxTurnsReached)
		return
	}
	if b := s.budget(BudgetTotalTokens); b != nil && b.Exceeded() {
		t.tripBudget(b)
		t.finish(StatusBudgetExceeded)
		return
	}
	if b := t.costExceeded(); b != nil {
		t.tripBudget(b)
		t.finish(StatusBudgetExceeded)
		return
	}
	s.ModelStep = t.schedule(StepModelTurn, "")
	t.setActiveStatus()
}

func (t *transition) finish(status RunStatus) {
	s := t.st
	s.Status = status
	s.Calls = nil
	s.ModelStep = 0
	s.Stop = nil
	s.Handoff = nil
	t.emit(EventCompleted, &CompletedData{Status: string(status), Completed: status == StatusCompleted, TurnCount: s.Turn})
	if status == StatusCompleted {
		t.emit(EventDone, &DoneData{Response: t.finalContent()})
	}
}

// finalContent is the run's final content as its envelope reports it:
// the last non-empty assistant text among the run's own messages.
func (t *transition) finalContent() string {
	if c := FinalContent(t.out.Messages); c != "" {
		return c
	}
	first := sort.Search(len(t.transcript), func(i int) bool { return t.transcript[i].Seq >= t.st.FirstMsgSeq })
	return FinalContent(t.transcript[first:])
}

func (t *transition) fail(ctx context.Context, code, msg string) {
	s := t.st
	t.closeOpen("the run failed")
	t.settleClosed(ctx)
	s.Status = StatusFailed
	s.Error = &RunError{Code: code, Message: msg}
	s.Calls = nil
	s.ModelStep = 0
	s.Stop = nil
	t.emit(EventFailed, &FailedData{Code: code, Error: msg})
}

// settleClosed appends the results of calls closed by a failure.
func (t *transition) settleClosed(ctx context.Context) {
	for i := range t.st.Calls {
		c := &t.st.Calls[i]
		if c.Status == CallResolved {
			t.record(ctx, c)
			c.Status = CallDone
		}
	}
}
