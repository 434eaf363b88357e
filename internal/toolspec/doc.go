// Package toolspec holds a server tool's executor configuration as the
// agents file writes it (type http, lambda or go, and each type's
// settings), and the per-agent binding of tool names to executors. It is
// the port between the agent registry, which parses and validates it, and
// package executors, which builds core.ToolExecutors from it; neither
// imports the other.
package toolspec
