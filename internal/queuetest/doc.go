// Package queuetest is the contract suite every step queue passes: the
// in-memory FIFO queue of package memstore and the SQS FIFO adapter of
// package sqsqueue run the same RunContract.
//
// The contract is SQS FIFO's, as far as Baton relies on it: a step is
// delivered as the JSON of core.Step; messages of one group are delivered
// in the order they were sent, and not while an earlier message of the
// group is in flight (received and neither deleted nor timed out), while
// other groups proceed; a deduplication id is remembered for the
// deduplication window, also after its message was deleted; a received
// message that is not deleted reappears after the visibility timeout with
// its receive count incremented; a message received MaxReceives times is
// dead-lettered instead of being delivered again, which unblocks its group;
// an Enqueue may carry any number of steps; and an Enqueue with a step that
// lacks a group or a deduplication id fails without sending any step.
//
// Receive may return several messages of one group in one call (SQS does;
// memstore and fauxqs return one per group), so the suite never relies on
// how a receive is batched, only on the order and on what is withheld.
//
// The suite uses real time unless the queue implements Clock, and keeps
// its waits to a few seconds: queues are created with a visibility timeout
// of Visibility and a maximum receive count of MaxReceives.
package queuetest
