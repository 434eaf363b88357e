// Package hooks calls the agents file's http and lambda hooks: the
// pre_tool_mediator and completion_policy of an agent (Mediator,
// Completion: core.PreToolMediator and core.CompletionPolicy funcs) and
// http or lambda guardrail rules (Rule, a guardrails.Rule).
//
// A hook is configured like a tool's executor (toolspec.Executor: type
// http with url, or lambda with function; secret_env, secret_ssm or
// secret_arn; timeout) and called the same way, through an
// executors.Endpoint: an http hook gets a POST signed with package
// toolsig (X-Baton-Timestamp, X-Baton-Signature), a lambda hook a
// synchronous Invoke. The request is a JSON object whose "hook" names the
// hook (pre_tool_mediator, completion_policy, guardrail); the answer is a
// JSON object decoded strictly (an unknown field is an error, so a typo
// never passes for a default). A call is bounded by the hook's timeout
// (DefaultTimeout when unset: hooks run inside a step's transition, in
// the worker and in the API process, so they must be quick).
//
// A hook that fails (a transport error, a timeout, a non-2xx status, a
// function error, an answer that does not decode) makes no decision: the
// mediator rejects the call (on_error "reject", the default) or lets it
// proceed (on_error "proceed"); the completion policy makes no decision
// (the loop continues); a guardrail rule returns the error, and the
// guardrails' on_error setting decides.
//
// Hooks must be idempotent. The machine calls them while it applies an
// input to a run (core.Machine's Plan and Apply), and the durable runner
// re-applies an input when its commit loses a race on the run's version,
// so one decision may be asked for more than once; a retried step asks
// again too. The mediator and the completion policy get an
// idempotency_key (<run_id>:<tool_call_id>:<hook>), also sent as the
// Idempotency-Key header over http, that is the same each time.
//
// Hooks are built once per cold start (secrets resolved, the Lambda
// client shared with the tools) by the composition root, internal/app.
package hooks
