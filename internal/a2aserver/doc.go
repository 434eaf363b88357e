// Package a2aserver is the A2A edge (Agent2Agent protocol 1.0, JSON-RPC
// binding): an agent of the agents file that opts in (`a2a: {enabled:
// true}`) is an A2A agent with its Agent Card at
// /a2a/{agent}/.well-known/agent-card.json and its JSON-RPC endpoint at
// /a2a/{agent}. It is a driving adapter: every method becomes runner
// calls (Start, Apply, Get, Wait, List; a stream follows the run through
// internal/runstream, as GET /v1/runs/{id}/stream does) and the run
// becomes an A2A task. It keeps no state of its own. The JSON-RPC
// envelope, the SSE framing and the A2A types are the official Go SDK's
// (github.com/a2aproject/a2a-go/v2: a2asrv's JSON-RPC handler over this
// package's a2asrv.RequestHandler).
//
// Mapping: a task is a Baton run (task id = run id) and its contextId
// the run's session. A new message (no taskId) starts a run whose id is
// derived from the tenant, the agent and the messageId, so a repeated
// message finds the run it started and never starts a second one. Its
// text parts are the user message (data parts are added as JSON);
// message.metadata.baton may carry POST /v1/runs' overrides (model,
// max_turns, budgets, parallel_tool_calls, context_budget), subject to
// the agent's allow_overrides. A message with a taskId answers the run:
// a data part {"decision": "accept"|"reject", "reason"} decides every
// pending approval, {"decisions": [{"action_id", "decision", "reason"}]}
// decides some, {"tool_results": [{"request_id", "success", "result",
// "error"}]} answers client tools; text alone on a working task steers
// it.
//
// States: queued and running → WORKING (a stream of a new task opens
// with SUBMITTED), approval_required and
// runtime_tool_pending → INPUT_REQUIRED (the status message carries the
// pending items as a data part {"baton": {"status", "pending"}}),
// completed → COMPLETED (artifact "answer": the final answer as text,
// and as data when it is JSON), cancelled and interrupted → CANCELED, an
// input guardrail's refusal → REJECTED, any other end → FAILED.
package a2aserver
