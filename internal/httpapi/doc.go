// Package httpapi is Baton's public HTTP API (DESIGN.md §2) as an API
// Gateway REST proxy handler: routing, bearer-token auth with scopes,
// strict JSON bodies, Idempotency-Key handling, the error format, and the
// mapping of runner errors to statuses. The same handler serves the API
// Lambda and `baton dev`.
package httpapi
