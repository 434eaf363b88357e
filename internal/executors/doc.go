// Package executors turns executor configurations (toolspec.Tools: agent
// → tool name → toolspec.Executor, as the agent registry binds them) into
// core.ToolExecutors: a Router by agent and tool name, the Go handler
// registry (GoRegistry) for users who build their own bundle, and the
// remote executor types built by Factories:
//
//   - http: POST {"tool_name","tool_call_id","run_id","session_id","parameters"}
//     to the operator's URL, signed with HMAC-SHA256 (X-Baton-Timestamp,
//     X-Baton-Signature; see package toolsig) and carrying
//     Idempotency-Key: <run_id>:<tool_call_id>. The signing secret comes
//     from secret_env, secret_ssm (an SSM SecureString) or secret_arn (a
//     Secrets Manager secret), resolved once at cold start by the shared
//     secrets.Resolver.
//   - lambda: a synchronous Invoke of a function by name or ARN with the
//     same event plus "idempotency_key".
//
// Outcomes map onto tool results as core.NormalizeToolOutput reads them:
// a JSON response or payload is the output (an object with a boolean
// "success" is a result envelope); a non-2xx status, a function error, an
// oversized response (DefaultMaxResponseBytes) or a response that is not
// JSON is a failed result with error_type http_status, function_error,
// response_too_large or invalid_response; a transport error, an API error
// or a timeout (executor.timeout, DefaultTimeout) is a Go error, which
// becomes a failed executor_exception result. No error or result ever
// contains a signing secret, and URLs are reported without their query
// or user info.
//
// Both types are Endpoints: Call sends any JSON body the same way (signed,
// bounded by the timeout) and returns the JSON answer, a *Failure or an
// error, which package hooks uses for the agents file's http and lambda
// hooks. Remote builds endpoints for tools (Factories) and hooks
// (Endpoint) over one secret resolver and one Lambda client.
//
// Executors and AWS clients (from internal/awsenv) are built once, when
// the Router is built at cold start; executions share them.
package executors
