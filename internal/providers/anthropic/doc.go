// Package anthropic is Baton's model provider for the Anthropic Messages
// API over HTTP. Provider implements core.ModelProvider.
//
// A request POSTs {base URL}/v1/messages with the headers x-api-key and
// anthropic-version: 2023-06-01. max_tokens, which the API requires, comes
// from the model spec's options or defaults to DefaultMaxTokens. The
// system prompt (ModelRequest.System plus the system-role messages) is the
// top-level system field. The transcript becomes strictly alternating
// user and assistant messages of content blocks, as package providers'
// Alternate builds them: assistant text and the tool calls after it form
// one assistant message of text and tool_use blocks (ids, mapped names and
// the parameters as input); tool results become tool_result blocks in the
// next user message, with is_error: true for failed results and any
// steering text after them; adjacent messages of the same role are merged.
// Tool-call ids that the API would refuse are mapped by providers.WireID,
// the same way in tool_use and tool_result blocks. Declared tools are sent
// with their mapped names and their parameter schema as input_schema. A
// request that declares no tools sends no tools field and renders past
// tool calls and results as text (Conversation.ToolHistoryAsText), since
// the API refuses tool_use and tool_result blocks without tools.
//
// The reply's content blocks are decoded one at a time by type: text
// blocks are joined into the content, tool_use blocks become tool calls
// (names mapped back), and every other block is skipped without failing
// the reply: thinking and redacted_thinking (the model's reasoning is not
// content), server_tool_use and web_search_tool_result (tools the API ran
// itself, whose content may be an array or an object; their outcome
// reaches the reply through the text blocks), and any type added later. A
// text or tool_use block that does not decode is a reply error.
// stop_reason is kept (end_turn, tool_use, max_tokens, stop_sequence,
// pause_turn…). Usage reports prompt_tokens as input_tokens plus
// cache_creation_input_tokens plus cache_read_input_tokens,
// completion_tokens as output_tokens, their sum as total_tokens, and the
// cache counts as cache_write_tokens and cache_read_tokens. There is no
// reasoning_tokens: the API counts extended-thinking tokens in
// output_tokens and reports no separate figure (usage.server_tool_use
// counts web searches, not tokens, and is not reported). RequestMetadata
// holds provider, model, the request-id header as request_id and the
// message id as response_id.
//
// The model spec's options may set max_tokens, temperature, top_p and
// stop (sent as stop_sequences); anything else is refused. Retries and
// error handling are those of package providers; the API's 529
// (overloaded) is retried like any 5xx.
//
// Streaming (see package providers): the request adds "stream": true.
// message_start gives the message id, model and input usage; each content
// block starts with content_block_start and grows by content_block_delta
// events: text_delta pieces are token deltas, input_json_delta fragments
// form a tool_use block's input (the block's own input when none come),
// thinking_delta pieces are thinking deltas, and signature_delta,
// citations_delta and every delta of a skipped block change nothing.
// Blocks are kept or skipped by type exactly as in a buffered reply.
// message_delta gives the stop reason and the usage so far, each count it
// holds replacing the one message_start gave; message_stop ends the
// stream; ping and unknown event types are ignored. An error event fails
// the attempt as providers.StreamError classifies it: overloaded_error,
// rate_limit_error and api_error are retried, invalid_request_error is
// not.
package anthropic
