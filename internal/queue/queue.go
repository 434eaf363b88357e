package queue

import (
	"context"
	"time"
)

// Delivery is one received message.
type Delivery struct {
	MessageID     string
	Body          []byte
	ReceiptHandle string
	ReceiveCount  int
	Group         string
	DedupID       string
	SentAt        time.Time
}

// Receiver is a queue the poller reads.
type Receiver interface {
	// Receive returns up to max messages, waiting up to wait for the first.
	Receive(ctx context.Context, max int, wait time.Duration) ([]Delivery, error)
	// Delete removes a received message by its receipt handle.
	Delete(ctx context.Context, receiptHandle string) error
}
