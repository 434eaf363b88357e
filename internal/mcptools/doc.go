// Package mcptools makes the tools of remote MCP servers (an agent's
// mcp_servers) Baton server tools, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). It is a driven adapter: a
// Manager is both the core.ToolSource the durable runner asks before a
// model turn and the core.ToolExecutor of mcp/<server>/<tool> calls.
//
// Sessions. One client session per agent, server and credential: per
// server when its headers name no {tenant} secret, else per server and
// tenant. The SDK negotiates the stateless 2026-07-28 revision
// (server/discover) and falls back to initialize for 2025-11-25 servers;
// transport streamable_http (default) or sse (the older HTTP+SSE). A
// session the server no longer knows (ErrSessionMissing) or a closed
// connection is dropped and the next use reconnects; a call that failed
// because the session was missing is sent once more on a new session (the
// server never saw it).
//
// Discovery. tools/list (every page) when the session opens, cached with
// a TTL; notifications/tools/list_changed marks the cache stale. Warm
// lists the servers without per-tenant secrets at cold start. A server
// that cannot be reached is not an error: Discover reports it in
// Unavailable (the run gets a tool_source_unavailable event) and tries
// again after RetryAfter. Each MCP tool becomes a declaration named
// mcp/<server>/<tool> (the MCP name unchanged), source the server's name,
// category "mcp", with the server's description and input schema, and
// the operator's tool_overrides (action_policy, runtime); tools outside
// the server's allow-list (tools) are never declared nor called.
//
// Calls. tools/call with the arguments and the Baton idempotency key
// (<run_id>:<tool_call_id>) in _meta under MetaIdempotencyKey. Results:
// structuredContent is the result when present; else the text content
// (one JSON text is decoded; several texts are joined by newlines; other
// content kinds are kept as their JSON objects); isError true is a failed
// result with error_type tool_error and the server's text; a result whose
// JSON is larger than MaxResultBytes is a failed response_too_large
// result; a transport failure, a protocol error or the server's timeout
// is a Go error (executor_exception, with the in_doubt rules of the
// intent ledger). Header values (credentials) never appear in errors.
package mcptools
