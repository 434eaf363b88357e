// Package worker is the SQS event-source handler of the worker Lambda:
// one step per message, partial batch failures for retryable errors, and
// FIFO order kept within a message group (after a failure, the rest of
// that group's messages in the batch are reported failed unprocessed).
package worker
