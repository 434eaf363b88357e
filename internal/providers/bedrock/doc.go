// Package bedrock is Baton's model provider for the Amazon Bedrock Converse
// API, through the AWS SDK's bedrockruntime client. Provider implements
// core.ModelProvider; build it with the *bedrockruntime.Client of the cold
// start (credentials come from the Lambda's role, never from a model
// spec).
//
// The model spec's model is the modelId: a model id, an inference profile
// id or an ARN. The system prompt (ModelRequest.System plus the
// system-role messages) is the system field, one text block per part. The
// transcript becomes strictly alternating user and assistant messages, as
// package providers' Alternate builds them: assistant text and the tool
// calls after it form one assistant message of text and toolUse blocks;
// tool results become toolResult blocks (one text block each, "(empty)"
// for an empty result, which Bedrock refuses) in the next user message,
// followed by any steering text; adjacent messages of the same role are
// merged. A failed result carries status "error" for the models that
// support the field (Anthropic Claude and Amazon Nova, recognised by
// "anthropic." or "amazon.nova" in the model id); other models refuse it,
// so for them the error text alone says what went wrong. Tool-call ids
// are mapped by providers.WireID; tool names follow the mapping of
// package providers, and declared tools go into toolConfig as toolSpec
// entries whose inputSchema is the parameter schema as a document. A
// request that declares no tools sends no toolConfig and renders past tool
// calls and results as text (Conversation.ToolHistoryAsText), since
// Converse refuses toolUse and toolResult blocks without a toolConfig.
//
// The reply's text blocks are joined into the content, toolUse blocks
// become tool calls (names mapped back), and stopReason is kept
// (end_turn, tool_use, max_tokens, stop_sequence, guardrail_intervened,
// content_filtered). Usage reports prompt_tokens as inputTokens plus
// cacheReadInputTokens plus cacheWriteInputTokens, completion_tokens as
// outputTokens, total_tokens as totalTokens when it is at least their sum
// (their sum otherwise), and the cache counts as cache_read_tokens and
// cache_write_tokens. RequestMetadata holds provider, model and the
// request id the SDK read from the response (x-amzn-RequestId).
//
// The model spec's options may set max_tokens, temperature, top_p and
// stop (inferenceConfig); anything else is refused. Calls are retried by
// the policy of package providers, not by the SDK's retryer (which is
// switched off per call): ThrottlingException, ServiceUnavailableException,
// InternalServerException, ModelNotReadyException, ModelTimeoutException,
// any 429 or 5xx, and network errors are retried, and when the attempts
// run out the error is core.Retryable; ValidationException,
// AccessDeniedException and other client errors fail at once with the
// service's message.
//
// Streaming (see package providers): ConverseStream gets the same request
// as Converse. Text deltas are token deltas, toolUse input fragments form
// the input of the toolUse block contentBlockStart opened, reasoningContent
// text is thinking (its signature and redacted content are dropped), and
// the reply's blocks are joined in content block order; messageStop gives
// the stop reason and metadata the usage, and a stream without both is
// cut short (the SDK ends its events quietly when the body ends). An
// exception inside the stream is classified as Converse's errors are
// (ModelStreamErrorException, which asks for a retry, is retried). The
// SDK closes a request's body as soon as the response headers arrive, and
// a body it has closed fails net/http's last read of it through WriteTo,
// which makes net/http close the connection under the event stream; the
// provider therefore hands the SDK's HTTP client request bodies that only
// Read.
package bedrock
