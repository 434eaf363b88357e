// Package toolspec holds a server tool's executor configuration as the
// agents file writes it (type http, lambda or go, and each type's
// settings), and the per-agent binding of tool names to executors. It is
// the port between the agent registry, which parses and validates it, and
// package executors, which builds core.ToolExecutors from it; neither
// imports the other. Hook is the same executor object for the agents
// file's http and lambda hooks (pre_tool_mediator, completion_policy),
// with on_error.
package toolspec
