// Package a2atool runs the tools whose executor is a remote A2A agent
// (executor type a2a in the agents file) on the official A2A Go SDK
// (github.com/a2aproject/a2a-go/v2, protocol 1.0). A call sends one
// message to the agent (returnImmediately) and follows the task it
// starts by reading it (GetTask) for at most the executor's timeout. It
// returns the tool's result once the task ended, or a
// core.RemotePending while the task still works or asks for input, which
// the durable runner turns into a parked call or a client-tool request;
// the runner records the task the moment the send returns
// (core.NoteRemoteSent), so no attempt sends a message twice
// (internal/durable/remote.go).
//
// The agent card is read once per process (per tenant when the bearer
// token's secret names {tenant}); an agent card or a connection that
// fails is a retryable error, marked core.ErrNotSent when the message
// cannot have reached the agent.
package a2atool
