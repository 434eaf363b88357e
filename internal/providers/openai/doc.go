// Package openai is Baton's model provider for OpenAI-compatible Chat
// Completions over HTTP: OpenAI itself and self-hosted servers that speak
// the same API (vLLM, Ollama, llama.cpp). Provider implements
// core.ModelProvider.
//
// A request POSTs {base URL}/chat/completions with the API key, when one
// is configured, as a Bearer token. The system prompt
// (ModelRequest.System plus the system-role messages) is the first
// message, with role system. User and assistant messages keep their
// roles; consecutive tool_call messages become one assistant message
// whose tool_calls carry the call ids and the parameters as a JSON string;
// each tool_result becomes a message with role tool and the call's
// tool_call_id (the Chat Completions API has no error flag, so a failed
// result is sent as its error text). Declared tools are sent as functions
// whose names follow the mapping of package providers, and
// parallel_tool_calls: true is sent when the request sets
// ParallelToolCalls and declares tools.
//
// The reply's text, tool calls (names mapped back, arguments decoded with
// exact numbers) and finish_reason become the ModelReply; finish reasons
// are normalized (stop → end_turn, tool_calls → tool_use, length →
// max_tokens, content_filter → content_filtered). Arguments that are not a
// JSON object fail the turn with a clear error rather than running a tool
// with parameters the model did not send: the error is retryable (a new
// sample usually repairs them) unless the reply was cut off at the token
// limit. Usage maps prompt_tokens, completion_tokens and total_tokens;
// prompt_tokens_details.cached_tokens becomes cache_read_tokens,
// completion_tokens_details.reasoning_tokens becomes reasoning_tokens, and
// any other numeric detail is kept as prompt_<name> or completion_<name>,
// zeros left out. RequestMetadata holds provider, model, the x-request-id
// header as request_id and the completion id as response_id.
//
// The model spec's options may set max_tokens, max_completion_tokens
// (newer OpenAI models want it instead of max_tokens), temperature, top_p
// and stop; anything else is refused. Retries and error handling are
// those of package providers.
//
// Streaming (see package providers): the request adds "stream": true and
// "stream_options": {"include_usage": true}. Each chunk's delta.content is
// a token delta and its reasoning_content (vLLM, DeepSeek) or reasoning
// (Ollama, OpenRouter) a thinking delta; a refusal, which becomes the
// content when there is no text, is emitted as one delta at the end. Tool
// calls are assembled by index: the id and the name come with the first
// fragment, the arguments are the concatenation of every fragment (a
// server that sends whole calls, each with its own id at the same index,
// gets one call per id). The usage is that of the last chunk holding one
// (the final chunk, whose choices are empty), and the stream must end
// with data: [DONE]. A chunk with an error object fails the attempt as
// providers.StreamError classifies it.
package openai
