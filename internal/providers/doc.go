// Package providers holds what Baton's model providers share: the
// reversible mapping of Baton tool names to provider function names, the
// provider-neutral view of a conversation, the HTTP transport with
// bounded retries, the per-run model options a provider accepts, the
// deployment configuration of the providers and the resolution of their
// API keys.
//
// The concrete providers live in the sub-packages openai, anthropic and
// bedrock; each is a core.ModelProvider. The package setup builds the
// enabled providers from Config at cold start.
//
// Tool names. Baton tool names contain '/' (ability/send_email,
// client/get_calendar), which provider function names (^[a-zA-Z0-9_-]{1,64}$)
// do not allow. NewToolNames maps every name declared in a request: '/'
// becomes "__" and any other character outside [a-zA-Z0-9_-] becomes '_'.
// A name whose mapped form is longer than 64 characters, is empty, or is
// shared with another declared name is cut to 55 characters and gets a
// suffix of '_' and the first 8 hex digits of the SHA-256 of the Baton name.
// The mapping depends only on the set of declared names, so every turn of a
// run sends the same function names. A function name in a reply is mapped
// back through the request's declarations; a name the request did not
// declare (a model inventing a tool) is passed through unchanged, and the
// loop answers it with a tool_not_found result.
//
// Conversation. The system prompt is ModelRequest.System followed by the
// content of every system-role message, in order, joined by a blank line;
// it goes where the provider wants it. Consecutive tool_call messages that
// follow an assistant message (or each other) become one assistant
// message with several tool calls; consecutive tool_result messages become
// one group of results. For providers that require strict alternation
// (Anthropic, Bedrock) Alternate merges adjacent messages of the same role,
// puts tool results before text in a merged user message, drops empty text
// and starts the conversation with a placeholder user message when the
// transcript starts with the assistant.
//
// Tool history without tools. A later run of a session may carry tool
// calls and results in its transcript while declaring no tools itself.
// Anthropic refuses tool_use and tool_result blocks in a request that
// defines no tools, and Bedrock Converse refuses toolUse and toolResult
// blocks without a toolConfig, so for a request that declares no tools
// both render that history as text with Conversation.ToolHistoryAsText:
// each call is a line of its assistant message,
// "[called tool NAME (call ID) with ARGS]" (ARGS the arguments as compact
// JSON), and each group of results a user message whose results read
// "[result of tool NAME (call ID): ok]" or "...: failed" followed by the
// content. The model still sees what was called and what came back, but
// cannot mistake the history for tools it may call now. With tools
// declared, the native blocks are sent. OpenAI accepts tool history
// without tools, so it always sends native tool calls and tool messages.
//
// Errors and retries. HTTP is POSTed with a per-attempt timeout and retried
// with exponential backoff and full jitter on 408, 429, 5xx and network
// errors, up to RetryPolicy.MaxAttempts attempts (4 by default), honouring
// Retry-After. A 429 whose error code no wait can fix (OpenAI's
// insufficient_quota, see PermanentCode) fails at once with the provider's
// message. Before each wait the retry loop tells the observer the call's
// context carries (core.WithModelRetryObserver) the attempt, status, code
// and wait, so runners can show a model_retry event while a call is
// throttled. When retries are exhausted the error is wrapped with
// core.Retryable, so the worker retries the step later. Any other 4xx is a
// non-retryable *Error that carries the provider's own error message from
// the response body, trimmed. API keys never appear in errors or logs: they
// are sent only in headers and are scrubbed from any text a provider echoes
// back.
//
// Model options. A run's core.ModelSpec picks the provider and the model
// id; its Options may hold only harmless generation settings (max_tokens,
// temperature, top_p, stop, and max_completion_tokens for OpenAI). Because
// an API caller may send a model spec when an agent allows overrides,
// options naming endpoints, keys or where secrets come from are refused:
// those come only from the deployment's configuration (see Config).
package providers
