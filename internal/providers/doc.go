// Package providers holds what Baton's model providers share: the
// reversible mapping of Baton tool names to provider function names, the
// provider-neutral view of a conversation, the HTTP transport with
// bounded retries and streamed replies (server-sent events), the per-run
// model options a provider accepts, the deployment configuration of the
// providers and the resolution of their API keys.
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
//
// Streaming. When the model call's context carries a token sink
// (core.StreamsTokens), a provider makes the streamed request instead of
// the buffered one: OpenAI-compatible chat completions with "stream": true
// and "stream_options": {"include_usage": true}, Anthropic Messages with
// "stream": true, Bedrock ConverseStream with Converse's request.
// Otherwise it makes the buffered call, unchanged. Each piece of text is
// handed to core.EmitToken as a core.DeltaToken as soon as it is decoded,
// and each piece of reasoning as a core.DeltaThinking (OpenAI-compatible
// reasoning_content or reasoning, Anthropic thinking_delta, Bedrock
// reasoningContent text); reasoning is never part of the reply, streamed
// or not. The stream is assembled into the wire shapes of a buffered reply
// and decoded by the same code, so the content, the tool calls (argument
// fragments joined by call index or content block, then decoded as a
// whole), the usage (OpenAI's last chunk, Anthropic's message_start and
// message_delta counts, Bedrock's metadata event), the request metadata
// and the stop reason are exactly what the buffered call returns for the
// same completion, and the token deltas of a call that succeeds at its
// first attempt join into its content. HTTP streams are read as
// server-sent events by ReadSSE, up to MaxResponseBytes; an
// OpenAI-compatible server that ignores the stream flag and answers with
// application/json is decoded as a buffered reply whose content is
// emitted as one delta. RetryPolicy.Timeout bounds a whole streamed
// attempt, as it bounds a buffered one.
//
// A stream is whole only once its end event has arrived ([DONE],
// message_stop, or Bedrock's messageStop and metadata): a stream that
// ends before it or a connection that fails in the middle fails the
// attempt with a transient *Error; an error the provider sends inside
// the stream (an OpenAI-compatible error chunk, an Anthropic error event,
// a Bedrock exception) is an *Error with MidStream set, transient when the
// same error would be as an HTTP status (overloaded_error, rate limits,
// api_error, server_error, ThrottlingException, ModelStreamErrorException;
// see StreamError); an event that does not decode is a reply error, not
// retried. A call never returns part of a reply.
//
// Retries while streaming follow the policy above: an attempt that fails
// is retried after the same backoff and model retry notice whether or not
// it emitted deltas, and the retry streams the turn again from the start.
// A client that shows deltas can therefore see part of a turn's text and
// thinking twice: the failed attempt's deltas, then the retry's. The
// model retry observer is called between the two, so a runner can tell
// clients where the failed attempt ends; deltas are never withdrawn. The
// committed transcript and envelope hold exactly one reply, the one the
// last attempt returned. The same holds when the queue retries a whole
// step after a retryable error.
package providers
