package core

import "context"

// MessageQueue is a standard (not FIFO) queue of opaque messages with
// string attributes: the intake queue, whose messages start runs, and its
// dead-letter queue, to which the intake sends a message it refuses with
// the refusal in the attributes. Delivery is at least once and unordered;
// a message not deleted reappears after the visibility timeout, and the
// intake queue dead-letters it after its maximum receives.
type MessageQueue interface {
	// Send sends one message.
	Send(ctx context.Context, body string, attrs map[string]string) error
	StepReceiver
}
