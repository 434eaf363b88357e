// Package durable is Baton's durable runner: it drives core's step machine
// one step per invocation over the storage and queue ports, so a run
// survives crashes, duplicate deliveries and pauses of any length. The API
// Lambda uses its run operations (start, view, submit, approve, cancel,
// steer), the worker Lambda its step handler, and the scheduler its sweep
// (pending expiry and lost-step recovery). Start, outside inputs and steps
// share one reload–apply–commit loop (Runner.commit). While a step's
// model or tool call runs, the worker commits each model call retry (a
// model_retry event) and, when half of Limits.StallAfter passes without
// one, a heartbeat, so the sweeper sends again only the steps of workers
// that died (progress.go). A commit that pauses, finishes or expires
// carries run notifications as outbox records, published after it and
// re-sent by the sweeper until marked sent (notify.go). It never imports an
// AWS SDK; adapters are injected through Options.
package durable
