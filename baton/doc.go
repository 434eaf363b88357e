// Package baton is the Go library API of Baton: it runs an agent in
// process — the whole loop in one call, on the same deterministic core as
// the serverless runtime — and returns the conversation result envelope.
//
// Define an Agent (model, system prompt, limits) with its server Tools,
// each a Go function (Typed adapts a function with typed parameters);
// start a Run with a Runtime; when the run pauses for a client tool or an
// approval, answer with SubmitToolResult, Approve or Reject, and the run
// goes on in the same call. A Runtime knows the scripted model provider
// (ProviderScripted) out of the box; add others to Runtime.Providers.
//
//	rt := &baton.Runtime{}
//	run, err := rt.Start(ctx, agent, baton.Request{Prompt: "Plan my week"})
//	env := run.Envelope() // schema agents-api.conversation-result, version 1
//
// The package holds no state between calls beyond the Run values it
// returns; runs are in memory only. For a deployment — durable state,
// the HTTP API, http and lambda tools — use the Lambda functions or
// `baton dev` with an agents file (see the README).
//
// Types such as Envelope, Message and ToolCall are aliases of package
// core's, so one import suffices.
package baton
