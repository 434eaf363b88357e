// Package sqsqueue is the SQS FIFO adapter of the step queue: it
// implements core.StepQueue (the API and the worker send steps) and
// core.StepReceiver (the local poller of `baton dev` reads them) on the SQS
// JSON protocol, and passes the queuetest contract suite that the
// in-memory queue of package memstore passes.
//
// A step is sent as the JSON of core.Step with MessageGroupId set to its
// group and MessageDeduplicationId to its dedup id. SQS accepts at most 128
// characters from ASCII letters, digits and punctuation in either; a longer
// id or one with other characters (spaces, non-ASCII) is replaced by a
// deterministic stand-in that keeps a readable prefix and appends the
// SHA-256 of the whole id, so distinct ids stay distinct. Deliveries report
// the ids as SQS holds them, stand-ins included.
//
// Errors are translated at this boundary: a missing queue is
// core.ErrNotFound, an invalid step core.ErrInvalidInput, and throttling,
// server faults and connection failures (after the SDK's own retries) are
// marked core.Retryable. A partially failed batch names the failed steps;
// steps of the same call that were sent stay sent, and sending them again
// is harmless because SQS drops a repeated deduplication id within its
// five-minute window.
//
// CreateQueues creates (or brings up to date) the FIFO queue and its FIFO
// dead-letter queue, for `baton dev --create-resources` and for tests;
// deployments create them with the CDK app in infra/.
package sqsqueue
