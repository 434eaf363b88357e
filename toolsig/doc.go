// Package toolsig signs and verifies the requests Baton's http tool
// executor sends to a tool endpoint, so a tool author can check that a
// request comes from their Baton deployment and is fresh.
//
// Every request carries three headers:
//
//	Idempotency-Key:   <run_id>:<tool_call_id>
//	X-Baton-Timestamp: <unix seconds when the request was signed>
//	X-Baton-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>
//
// The signed string is the timestamp header exactly as sent, a full stop,
// and the raw request body bytes; verify before parsing or re-encoding the
// body. The secret is the one the operator configured on the executor
// (secret_env, secret_ssm or secret_arn).
//
// Verify rejects a malformed header, a signature that does not match
// (compared in constant time), and a timestamp more than Tolerance (five
// minutes) older or newer than the verifier's clock. The window bounds how
// long a captured request can be replayed; within it, deduplicate on the
// Idempotency-Key header, which stays the same when Baton retries a call
// and differs for every other call.
//
// A header may carry several comma-separated signatures ("v1=…,v1=…");
// Verify accepts the request when any of them matches. Verifier accepts
// several secrets, which lets a tool author rotate a secret without
// downtime: verify with the new and the old secret until every Baton
// deployment signs with the new one.
//
// The package depends on the standard library only.
package toolsig
