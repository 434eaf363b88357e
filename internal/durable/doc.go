// Package engine is Baton's distributed runner: it drives core's step
// machine one step per invocation over the storage and queue ports. The
// API Lambda uses its run operations (start, view, submit, approve,
// cancel, steer), the worker Lambda its step handler, and the scheduler
// its sweep (pending expiry and lost-step recovery). It never imports an
// AWS SDK; adapters are injected.
package durable
