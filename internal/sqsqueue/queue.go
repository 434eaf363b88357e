package sqsqueue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/baton-agents/baton/core"
)

// SQS limits the adapter works within.
const (
	// maxBatch is the most entries a SendMessageBatch or messages a
	// ReceiveMessage carries. Step bodies are references of about a
	// hundred bytes, so ten of them stay far below the batch size limit.
	maxBatch = 10
	// maxWait is the longest long poll ReceiveMessage allows.
	maxWait = 20 * time.Second
)

// Queue is an SQS FIFO queue of step messages (New), or a standard queue
// of opaque messages with attributes (NewStandard: the intake queue and
// its dead-letter queue).
type Queue struct {
	client   *sqs.Client
	url      string
	standard bool
}

var (
	_ core.StepQueue    = (*Queue)(nil)
	_ core.StepReceiver = (*Queue)(nil)
	_ core.MessageQueue = (*Queue)(nil)
)

// NewStandard returns the standard queue at queueURL, for Send, Receive
// and Delete (Enqueue is for FIFO step queues).
func NewStandard(client *sqs.Client, queueURL string) *Queue {
	return &Queue{client: client, url: queueURL, standard: true}
}

// Send sends one message with string message attributes (a standard
// queue's; a FIFO queue refuses a message without a group).
func (q *Queue) Send(ctx context.Context, body string, attrs map[string]string) error {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(body)}
	if len(attrs) > 0 {
		in.MessageAttributes = make(map[string]types.MessageAttributeValue, len(attrs))
		for k, v := range attrs {
			in.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	if _, err := q.client.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("send to %s: %w", q.url, translate(err))
	}
	return nil
}

// New returns the queue at queueURL. The client is built once per cold
// start and shared; the queue holds no other state.
func New(client *sqs.Client, queueURL string) *Queue {
	return &Queue{client: client, url: queueURL}
}

// URL is the queue's URL.
func (q *Queue) URL() string { return q.url }

// Enqueue sends steps in order, in batches of at most ten. Every step
// needs a group and a dedup id; without them the call fails with
// core.ErrInvalidInput before anything is sent. A failed batch stops the
// call: the error names the steps that were not sent and is retryable
// when every failure was SQS's (throttling or a server fault). Steps sent
// before the failure stay sent; a retry of the whole call is safe, as SQS
// drops their repeated dedup ids.
func (q *Queue) Enqueue(ctx context.Context, steps []core.QueuedStep) error {
	entries := make([]types.SendMessageBatchRequestEntry, 0, len(steps))
	for i, s := range steps {
		if s.Group == "" || s.DedupID == "" {
			return fmt.Errorf("enqueue step %s: %w: group and dedup id are required", stepName(s), core.ErrInvalidInput)
		}
		body, err := json.Marshal(s.Step)
		if err != nil {
			return fmt.Errorf("enqueue step %s: encode: %w", stepName(s), err)
		}
		entries = append(entries, types.SendMessageBatchRequestEntry{
			Id:                     aws.String(strconv.Itoa(i)),
			MessageBody:            aws.String(string(body)),
			MessageGroupId:         aws.String(sqsID(s.Group)),
			MessageDeduplicationId: aws.String(sqsID(s.DedupID)),
		})
	}
	for start := 0; start < len(entries); start += maxBatch {
		end := min(start+maxBatch, len(entries))
		out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{
			QueueUrl: aws.String(q.url),
			Entries:  entries[start:end],
		})
		if err != nil {
			return fmt.Errorf("enqueue steps %d-%d of %d (%s…): %w", start+1, end, len(steps), stepName(steps[start]), translate(err))
		}
		if len(out.Failed) > 0 {
			return batchError(steps, start, end, out.Failed)
		}
	}
	return nil
}

// batchError describes the failed entries of the batch steps[start:end].
// It is retryable when every entry failed on SQS's side.
func batchError(steps []core.QueuedStep, start, end int, failed []types.BatchResultErrorEntry) error {
	retryable := true
	parts := make([]string, 0, len(failed))
	for _, f := range failed {
		code, msg := aws.ToString(f.Code), aws.ToString(f.Message)
		name := "entry " + aws.ToString(f.Id)
		if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i >= start && i < end {
			name = stepName(steps[i])
		}
		fault := "sender fault"
		if !f.SenderFault {
			fault = "server fault"
		}
		parts = append(parts, fmt.Sprintf("%s: %s: %s (%s)", name, code, msg, fault))
		if f.SenderFault && !transientCode(code) {
			retryable = false
		}
	}
	err := fmt.Errorf("enqueue steps %d-%d of %d: %d not sent: %s", start+1, end, len(steps), len(failed), strings.Join(parts, "; "))
	if retryable {
		return core.Retryable(err)
	}
	return err
}

// stepName names a step in errors: run id, sequence and group.
func stepName(s core.QueuedStep) string {
	return fmt.Sprintf("%s/%d (group %q)", s.Step.RunID, s.Step.Seq, s.Group)
}

// receiveAttributes are the system attributes a Delivery reports.
var receiveAttributes = []types.MessageSystemAttributeName{
	types.MessageSystemAttributeNameApproximateReceiveCount,
	types.MessageSystemAttributeNameMessageGroupId,
	types.MessageSystemAttributeNameMessageDeduplicationId,
	types.MessageSystemAttributeNameSentTimestamp,
}

// Receive returns up to limit messages (1 to 10), long-polling up to wait
// (rounded up to whole seconds, at most 20 s) for the first; a zero wait
// is left out of the request, so the queue's ReceiveMessageWaitTimeSeconds
// applies (0 on queues CreateQueues makes). The messages
// become invisible for the queue's visibility timeout. Each call has its
// own receive request attempt id, so that the SDK's retry of a receive
// whose response was lost returns the same messages instead of leaving
// them in flight, and their groups blocked, until the timeout.
func (q *Queue) Receive(ctx context.Context, limit int, wait time.Duration) ([]core.ReceivedMessage, error) {
	limit = min(maxBatch, max(1, limit))
	wait = min(maxWait, max(0, wait))
	in := &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(q.url),
		MaxNumberOfMessages:         int32(limit),
		WaitTimeSeconds:             int32(math.Ceil(wait.Seconds())),
		MessageSystemAttributeNames: receiveAttributes,
		MessageAttributeNames:       []string{"All"},
	}
	if !q.standard { // attempt ids are FIFO's only
		attempt, err := attemptID()
		if err != nil {
			return nil, fmt.Errorf("receive from %s: %w", q.url, err)
		}
		in.ReceiveRequestAttemptId = aws.String(attempt)
	}
	out, err := q.client.ReceiveMessage(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", q.url, translate(err))
	}
	ds := make([]core.ReceivedMessage, 0, len(out.Messages))
	for _, m := range out.Messages {
		d, err := delivery(m)
		if err != nil {
			return nil, fmt.Errorf("receive from %s: %w", q.url, err)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// delivery converts a received message.
func delivery(m types.Message) (core.ReceivedMessage, error) {
	d := core.ReceivedMessage{
		MessageID:     aws.ToString(m.MessageId),
		Body:          []byte(aws.ToString(m.Body)),
		ReceiptHandle: aws.ToString(m.ReceiptHandle),
		Group:         m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)],
		DedupID:       m.Attributes[string(types.MessageSystemAttributeNameMessageDeduplicationId)],
	}
	for k, v := range m.MessageAttributes {
		if v.StringValue != nil {
			if d.Attributes == nil {
				d.Attributes = map[string]string{}
			}
			d.Attributes[k] = *v.StringValue
		}
	}
	if v, ok := m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return d, fmt.Errorf("message %s: receive count %q: %w", d.MessageID, v, err)
		}
		d.ReceiveCount = n
	}
	if v, ok := m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)]; ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return d, fmt.Errorf("message %s: sent timestamp %q: %w", d.MessageID, v, err)
		}
		d.SentAt = time.UnixMilli(ms)
	}
	return d, nil
}

// attemptID returns a fresh ReceiveRequestAttemptId.
func attemptID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("receive attempt id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Delete removes a received message. On a FIFO queue SQS refuses a
// receipt handle whose visibility timeout has passed (the message is
// visible again and will be redelivered); that refusal is returned as
// an error wrapping core.ErrNotFound.
func (q *Queue) Delete(ctx context.Context, receiptHandle string) error {
	_, err := q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{
		QueueUrl:      aws.String(q.url),
		ReceiptHandle: aws.String(receiptHandle),
	})
	if err == nil {
		return nil
	}
	var invalid *types.ReceiptHandleIsInvalid
	if errors.As(err, &invalid) || isExpiredReceipt(err) {
		return fmt.Errorf("delete from %s: %w: %w", q.url, core.ErrNotFound, err)
	}
	return fmt.Errorf("delete from %s: %w", q.url, translate(err))
}

// ExtendVisibility hides a received message for d from now
// (ChangeMessageVisibility; d is rounded up to whole seconds, at most 12
// hours). A handle SQS refuses (the message was deleted, or its
// visibility timeout passed) is an error wrapping core.ErrNotFound.
func (q *Queue) ExtendVisibility(ctx context.Context, receiptHandle string, d time.Duration) error {
	secs := min(int32((d+time.Second-1)/time.Second), 12*3600)
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          aws.String(q.url),
		ReceiptHandle:     aws.String(receiptHandle),
		VisibilityTimeout: secs,
	})
	if err == nil {
		return nil
	}
	var invalid *types.ReceiptHandleIsInvalid
	var gone *types.MessageNotInflight
	if errors.As(err, &invalid) || errors.As(err, &gone) || isExpiredReceipt(err) {
		return fmt.Errorf("extend the visibility in %s: %w: %w", q.url, core.ErrNotFound, err)
	}
	return fmt.Errorf("extend the visibility in %s: %w", q.url, translate(err))
}

// isExpiredReceipt reports whether err is SQS refusing a receipt handle
// because its visibility timeout has passed.
func isExpiredReceipt(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && strings.TrimPrefix(api.ErrorCode(), queryPrefix) == "InvalidParameterValue" &&
		strings.Contains(strings.ToLower(api.ErrorMessage()), "receipt handle has expired")
}
