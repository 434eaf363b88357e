// Package agui is the AG-UI edge: POST /v1/agents/{agent}/agui takes an
// AG-UI RunAgentInput (@ag-ui/core 1.0.0) and answers a stream of AG-UI
// events. It is a driving adapter: a RunAgentInput becomes runner calls
// (Start, or Apply of client results and approval decisions on the
// thread's paused run), and the run, followed by internal/runstream,
// becomes AG-UI events. It keeps no state of its own.
//
// Mapping: threadId is the Baton session id (scoped to the caller's
// tenant); each AG-UI runId is a stream over one Baton run (the Baton run
// id is in RUN_STARTED's metadata.baton_run_id; a continuation streams
// the same Baton run under the frontend's new runId). An AG-UI tool X is
// the run's client tool client/X, and is named X again in every event.
// forwardedProps.baton may carry POST /v1/runs' overrides (model,
// max_turns, budgets, parallel_tool_calls, context_budget), subject to
// the agent's allow_overrides.
//
// A run paused for client tools ends with RUN_FINISHED, outcome success
// with pendingToolCallIds (@ag-ui/core 1.0.0 reports a frontend tool call
// left to the application that way); the next input on the thread ends
// its messages with the tool messages, matched to the pending requests by
// toolCallId; tool messages re-sent with nothing new (their calls have
// results) are refused with tool_call_already_answered. A run paused on
// approvals ends with RUN_FINISHED, outcome interrupt, one interrupt per
// pending action (a turn's calls are decided one at a time); the next
// input answers them in resume. Another tenant's threadId of the same
// name is another thread: it sees nothing of this one.
//
// History: a frontend re-sends its whole history. Baton appends only the
// messages after the last one it already knows: a message whose id is
// one Baton stored (metadata.agui_message_id of a transcript message) or
// emitted (ids starting "baton-"), an assistant message whose tool calls
// are in the transcript, or a tool message whose call has a result
// there. When none is known and the thread has a transcript, the first
// as many messages as the transcript holds (counting user, system and
// assistant text messages and tool results) are taken as known.
package agui
