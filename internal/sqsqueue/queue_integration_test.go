//go:build integration

package sqsqueue_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/queuetest"
	"github.com/baton-agents/baton/internal/sqsqueue"
)

// client returns an SQS client for BATON_TEST_SQS_ENDPOINT (an emulator
// such as fauxqs, or LocalStack), skipping the test when it is unset.
func client(t *testing.T) (*sqs.Client, string) {
	t.Helper()
	endpoint := os.Getenv("BATON_TEST_SQS_ENDPOINT")
	if endpoint == "" {
		t.Skip("BATON_TEST_SQS_ENDPOINT is not set")
	}
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) }), endpoint
}

// uniqueName returns a queue name no other test run uses.
func uniqueName(t *testing.T) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "baton-test-" + hex.EncodeToString(b[:])
}

// createQueues creates a queue pair and deletes it when the test ends.
func createQueues(t *testing.T, c *sqs.Client, name string, visibility time.Duration, maxReceives int) (string, string) {
	t.Helper()
	queueURL, dlqURL, err := sqsqueue.CreateQueues(t.Context(), c, name, visibility, maxReceives)
	if err != nil {
		t.Fatalf("create queues: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, u := range []string{queueURL, dlqURL} {
			if _, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)}); err != nil {
				t.Errorf("delete queue %s: %v", u, err)
			}
		}
	})
	return queueURL, dlqURL
}

// contractQueue is an SQS queue with its dead-letter queue.
type contractQueue struct {
	*sqsqueue.Queue
	dlq *sqsqueue.Queue
}

// DeadLetters receives (and deletes) what the dead-letter queue holds.
func (q contractQueue) DeadLetters(ctx context.Context) ([]core.ReceivedMessage, error) {
	ds, err := q.dlq.Receive(ctx, 10, time.Second)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if err := q.dlq.Delete(ctx, d.ReceiptHandle); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

func TestQueueContract(t *testing.T) {
	c, _ := client(t)
	queuetest.RunContract(t, func(t *testing.T) queuetest.Queue {
		queueURL, dlqURL := createQueues(t, c, uniqueName(t), queuetest.Visibility, queuetest.MaxReceives)
		return contractQueue{sqsqueue.New(c, queueURL), sqsqueue.New(c, dlqURL)}
	})
}

func TestCreateQueues(t *testing.T) {
	c, endpoint := client(t)
	ctx := t.Context()
	name := uniqueName(t)
	queueURL, dlqURL := createQueues(t, c, name, 2*time.Second, 3)

	// The emulator may answer with URLs on another host than the endpoint:
	// the SDK sends QueueUrl in the body and routes by BaseEndpoint.
	if u, err := url.Parse(queueURL); err == nil && !strings.Contains(endpoint, u.Host) {
		t.Logf("queue URL %s has host %s; endpoint is %s", queueURL, u.Host, endpoint)
	}
	if !strings.HasSuffix(queueURL, "/"+name+".fifo") || !strings.HasSuffix(dlqURL, "/"+name+"-dlq.fifo") {
		t.Errorf("URLs %s, %s: want names %s.fifo, %s-dlq.fifo", queueURL, dlqURL, name, name)
	}

	// Again with the same settings, then with others: same queues, and
	// the new settings apply.
	for _, tc := range []struct {
		visibility  time.Duration
		maxReceives int
	}{{2 * time.Second, 3}, {5 * time.Second, 4}} {
		q2, d2, err := sqsqueue.CreateQueues(ctx, c, name, tc.visibility, tc.maxReceives)
		if err != nil {
			t.Fatalf("create queues again (%v, %d): %v", tc.visibility, tc.maxReceives, err)
		}
		if q2 != queueURL || d2 != dlqURL {
			t.Errorf("second create returned %s, %s; want %s, %s", q2, d2, queueURL, dlqURL)
		}
		dlqArn := attributes(t, c, dlqURL)[string(types.QueueAttributeNameQueueArn)]
		attrs := attributes(t, c, queueURL)
		want := map[string]string{
			"FifoQueue":                 "true",
			"ContentBasedDeduplication": "false",
			"VisibilityTimeout":         strconv.Itoa(int(tc.visibility / time.Second)),
		}
		for k, v := range want {
			if attrs[k] != v {
				t.Errorf("%s = %q, want %q", k, attrs[k], v)
			}
		}
		var policy struct {
			DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
			MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
		}
		if err := json.Unmarshal([]byte(attrs["RedrivePolicy"]), &policy); err != nil {
			t.Fatalf("RedrivePolicy %q: %v", attrs["RedrivePolicy"], err)
		}
		if policy.DeadLetterTargetArn != dlqArn || strings.Trim(string(policy.MaxReceiveCount), `"`) != strconv.Itoa(tc.maxReceives) {
			t.Errorf("RedrivePolicy %s, want target %s and %d receives", attrs["RedrivePolicy"], dlqArn, tc.maxReceives)
		}
		if got := attributes(t, c, dlqURL)["FifoQueue"]; got != "true" {
			t.Errorf("dead-letter queue FifoQueue = %q, want true", got)
		}
	}
}

func attributes(t *testing.T, c *sqs.Client, queueURL string) map[string]string {
	t.Helper()
	out, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll},
	})
	if err != nil {
		t.Fatalf("attributes of %s: %v", queueURL, err)
	}
	return out.Attributes
}

// TestStandardQueue: CreateStandardQueues makes a standard queue and its
// dead-letter queue; Send's message attributes come back with Receive, and
// a message received the maximum number of times without a delete moves
// to the dead-letter queue.
func TestStandardQueue(t *testing.T) {
	c, _ := client(t)
	ctx := t.Context()
	name := uniqueName(t)
	queueURL, dlqURL, err := sqsqueue.CreateStandardQueues(ctx, c, name, time.Second, 1)
	if err != nil {
		t.Fatalf("create standard queues: %v", err)
	}
	t.Cleanup(func() {
		for _, u := range []string{queueURL, dlqURL} {
			_, _ = c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		}
	})
	if strings.HasSuffix(queueURL, ".fifo") || !strings.HasSuffix(dlqURL, name+"-dlq") {
		t.Fatalf("urls %s %s", queueURL, dlqURL)
	}
	q, dlq := sqsqueue.NewStandard(c, queueURL), sqsqueue.NewStandard(c, dlqURL)
	if err := q.Send(ctx, `{"a":1}`, map[string]string{"baton_error_code": "invalid_request"}); err != nil {
		t.Fatal(err)
	}
	got, err := q.Receive(ctx, 10, 5*time.Second)
	if err != nil || len(got) != 1 {
		t.Fatalf("receive: %v %v", got, err)
	}
	if string(got[0].Body) != `{"a":1}` || got[0].Attributes["baton_error_code"] != "invalid_request" || got[0].ReceiveCount != 1 {
		t.Fatalf("message %+v", got[0])
	}
	// Not deleted: after the visibility timeout it is redriven.
	var dead []core.ReceivedMessage
	for i := 0; i < 20 && len(dead) == 0; i++ {
		_, _ = q.Receive(ctx, 10, time.Second)
		if dead, err = dlq.Receive(ctx, 10, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if len(dead) != 1 || dead[0].Attributes["baton_error_code"] != "invalid_request" {
		t.Fatalf("dead letters %+v", dead)
	}
}
