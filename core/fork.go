package core

import (
	"fmt"
	"slices"
)

// A forked run starts from a message of another run (its source): its
// transcript is the source's up to that message, shared rather than
// copied (TranscriptSegment), and the tool calls it makes after the fork
// point meet the source's record of the calls it made there (RecordedCall)
// as its ForkRef.Tools mode says:
//
//   - reuse: a call whose tool and canonical parameters match a call the
//     source made after the fork point gets that call's recorded result,
//     marked replayed, and executes nothing; any other call runs live;
//   - replay: nothing executes: a matching call gets its recorded result,
//     any other a failed result of ErrTypeNotRecorded;
//   - live: every call runs again.
//
// Client tools, approvals and agent tools follow the same rule (a
// replayed call asks no client, no approver, starts no child). A
// replayed result counts against no budget. Handoffs always run: they
// change the agent, not the world.

// Tool modes of a forked run (ForkRef.Tools).
const (
	ForkToolsReuse  = "reuse"
	ForkToolsReplay = "replay"
	ForkToolsLive   = "live"
)

// ErrTypeNotRecorded is the error type of a call a fork in replay mode
// made that its source never made.
const ErrTypeNotRecorded = "not_recorded"

// MetaReplayed and MetaReplayedFrom mark a tool_result message answered
// from the source run's record: true, and the recorded result's
// ReplayRef.
const (
	MetaReplayed     = "replayed"
	MetaReplayedFrom = "replayed_from"
)

// ValidForkTools reports whether s names a tool mode.
func ValidForkTools(s string) bool {
	return s == ForkToolsReuse || s == ForkToolsReplay || s == ForkToolsLive
}

// ForkRef says where a forked run comes from: its source run, the
// sequence number of the message it forked at, and its tool mode.
type ForkRef struct {
	RunID string `json:"run_id"`
	Seq   int64  `json:"seq"`
	Tools string `json:"tools"`
}

// ReplayRef names a recorded tool result: the run that recorded it and
// the sequence number of its tool_result message.
type ReplayRef struct {
	RunID string `json:"run_id"`
	Seq   int64  `json:"seq"`
}

// TranscriptSegment is a part of a session's transcript kept in another
// session: a session whose transcript starts with a fork's shared prefix
// reads its messages below Before from SessionID (above the previous
// segment's Before), and its own from Before on. A fork of a fork has one
// segment per fork.
type TranscriptSegment struct {
	SessionID string `json:"session_id"`
	Before    int64  `json:"before"`
}

// ForkBase is the transcript base of a fork at seq of a run on session
// sessionID, whose own base is base: the segments below seq, the last one
// cut at seq, then the source session's messages up to seq.
func ForkBase(base []TranscriptSegment, sessionID string, seq int64) []TranscriptSegment {
	out := make([]TranscriptSegment, 0, len(base)+1)
	for _, s := range base {
		if s.Before >= seq {
			return append(out, TranscriptSegment{SessionID: s.SessionID, Before: seq})
		}
		out = append(out, s)
	}
	return append(out, TranscriptSegment{SessionID: sessionID, Before: seq})
}

// ForkPoint reports whether a fork may start at msg: a user message (the
// question, as it was or edited) or an assistant message (asked again, or
// replaced by an edited answer). Tool calls and results belong to their
// turn, and system messages to the context before it.
func ForkPoint(msg Message) bool { return msg.Role == RoleUser || msg.Role == RoleAssistant }

// RecordedCall is a tool call a forked run's source made after the fork
// point, and its recorded result; or a scripted answer of an eval case
// (RecordedAnswer).
type RecordedCall struct {
	Ref        ReplayRef
	ToolName   string
	Parameters map[string]any
	Result     ToolResult
	canon      string
	// anyParams: the answer matches a call of its tool whatever its
	// parameters.
	anyParams bool
}

// RecordedAnswer is a scripted answer of an eval case (EvalRef.Tools) to
// a call of tool: with params, to a call with those canonical
// parameters; without, to any call of the tool. Each answer answers one
// call, in order, as a recorded call does.
func RecordedAnswer(ref ReplayRef, tool string, params map[string]any, res ToolResult) RecordedCall {
	rc := RecordedCall{Ref: ref, ToolName: tool, Parameters: params, Result: res, anyParams: params == nil}
	if params != nil {
		if canon, err := CanonicalJSON(params); err == nil {
			rc.canon = string(canon)
		}
	}
	return rc
}

// replayMode is the run's tool mode against a record, and what the
// record is: a fork's source (unless live), or an eval case's scripted
// answers; ok false when its calls meet no record.
func (st *RunState) replayMode() (mode, record string, ok bool) {
	if f := st.Config.ForkedFrom; f != nil && f.Tools != ForkToolsLive {
		return f.Tools, fmt.Sprintf("run %s, which this run was forked from, did not call '%%s' with these parameters after the fork point", f.RunID), true
	}
	if ev := st.Config.Eval; ev != nil && ev.Tools != "" {
		return ev.Tools, "the eval case has no scripted answer to a call of '%s' with these parameters", true
	}
	return "", "", false
}

// notOutcomes are the error types of results mediation gave instead of
// the tool (or its client, approver or child run): a fork never reuses
// them, since its own mediation decides those again.
var notOutcomes = []string{
	ErrTypeNotRecorded, ErrTypeDuplicateToolCall, ErrTypeSkipped, ErrTypeTooManyPending, ErrTypeToolNotFound,
	ErrTypeForbidden, ErrTypeInvalidParameters, ErrTypeMissingParameters, ErrTypeGuardrailDenied,
	ErrTypeMediatorRejected, ErrTypeDepthExceeded, ErrTypeCancelled,
}

// RecordedCalls are the calls of run runID's tool records (results with
// their bodies restored) that a fork at seq may reuse: those recorded at
// or after seq whose result is the call's own outcome, in record order.
func RecordedCalls(runID string, seq int64, recs []ToolExecutionResult) []RecordedCall {
	var out []RecordedCall
	for _, r := range recs {
		if r.Seq < seq || (!r.Result.Success && slices.Contains(notOutcomes, r.Result.ErrorType)) {
			continue
		}
		canon, err := CanonicalJSON(r.Parameters)
		if err != nil {
			continue
		}
		out = append(out, RecordedCall{Ref: ReplayRef{RunID: runID, Seq: r.Seq}, ToolName: r.ToolName, Parameters: r.Parameters,
			Result: r.Result, canon: string(canon)})
	}
	return out
}

// UseRecorded gives a forked run's state the recorded calls of its
// source (RecordedCalls) for planning its next step. A runner sets them
// before it plans a tool_call step of a fork whose mode is not live.
func (st *RunState) UseRecorded(calls []RecordedCall) {
	st.recorded = calls
	if st.recorded == nil {
		st.recorded = []RecordedCall{}
	}
}

// NeedsRecorded reports whether planning step needs the source's
// recorded calls (UseRecorded).
func (st *RunState) NeedsRecorded(step Step) bool {
	_, _, ok := st.replayMode()
	return step.Kind == StepToolCall && ok
}

// fromRecord answers call c of a forked run from its source's record
// (which Plan made sure the state has): the recorded result of the first
// matching call no earlier call of the run took (ok), a not_recorded
// failure in replay mode, or nothing (the call is mediated and runs
// live).
func (st *RunState) fromRecord(transcript []Message, c *CallState, decl ToolDeclaration) (Decision, bool) {
	mode, record, ok := st.replayMode()
	if !ok || decl.Executor == ExecutorHandoff {
		return Decision{}, false
	}
	want, err := CanonicalJSON(c.Parameters)
	if err != nil {
		return Decision{}, false
	}
	// Recorded results this run already took: in its transcript, and
	// those of this turn's calls not appended yet. Identical calls of
	// the turn ahead of c take the matches ahead of its own.
	taken := map[ReplayRef]bool{}
	for _, msg := range transcript {
		if msg.Seq >= st.FirstMsgSeq && msg.Role == RoleToolResult {
			if ref, ok := replayRefOf(msg.Metadata[MetaReplayedFrom]); ok {
				taken[ref] = true
			}
		}
	}
	ahead := 0
	for i := range st.Calls {
		sc := &st.Calls[i]
		if sc.ID == c.ID {
			break
		}
		if sc.Status == CallDone {
			continue
		}
		if sc.Replayed != nil {
			taken[*sc.Replayed] = true
		} else if sc.Name == c.Name {
			if canon, err := CanonicalJSON(sc.Parameters); err == nil && string(canon) == string(want) {
				ahead++
			}
		}
	}
	for i := range st.recorded {
		rc := &st.recorded[i]
		if rc.ToolName != c.Name || taken[rc.Ref] || (!rc.anyParams && rc.canon != string(want)) {
			continue
		}
		if ahead > 0 {
			ahead--
			continue
		}
		ref := rc.Ref
		return Decision{Kind: DecideResult, Result: rc.Result, Replayed: &ref}, true
	}
	if mode == ForkToolsReplay {
		return Decision{Kind: DecideResult, Result: ToolResult{Success: false, ToolName: c.Name, ErrorType: ErrTypeNotRecorded,
			Error: "Not executed: " + fmt.Sprintf(record, c.Name) + ", and this run replays recorded results only (tools: replay)."}}, true
	}
	return Decision{}, false
}

// replayRefOf reads a replayed_from value: a ReplayRef as it is built,
// or as JSON read it back.
func replayRefOf(v any) (ReplayRef, bool) {
	switch r := v.(type) {
	case ReplayRef:
		return r, true
	case *ReplayRef:
		if r != nil {
			return *r, true
		}
	case map[string]any:
		id, _ := r["run_id"].(string)
		seq, ok := intOf(r["seq"])
		return ReplayRef{RunID: id, Seq: seq}, ok && id != ""
	}
	return ReplayRef{}, false
}
