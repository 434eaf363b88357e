//go:build e2e

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// intakeFeed sends intake messages to a running baton dev and reads its
// dead letters: through --intake-dir on the embedded stores, through SQS
// (the intake queue and NAME-dlq) on the emulators.
type intakeFeed interface {
	send(t *testing.T, name, body string)
	dead(t *testing.T) []deadLetter
	drained(t *testing.T) bool
}

type deadLetter struct {
	Attributes map[string]string `json:"attributes"`
	Body       string            `json:"body"`
}

type dirFeed struct{ dir string }

func (f dirFeed) send(t *testing.T, name, body string) {
	t.Helper()
	tmp := filepath.Join(f.dir, name+".tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.dir, name+".json")); err != nil {
		t.Fatal(err)
	}
}

func (f dirFeed) dead(t *testing.T) []deadLetter {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(f.dir, "dead", "*.json"))
	var out []deadLetter
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var d deadLetter
		if err := json.Unmarshal(b, &d); err != nil {
			continue // being written
		}
		out = append(out, d)
	}
	return out
}

func (f dirFeed) drained(t *testing.T) bool {
	left, _ := filepath.Glob(filepath.Join(f.dir, "*.json"))
	return len(left) == 0
}

type sqsFeed struct {
	c          *sqs.Client
	queue, dlq string
	seen       []deadLetter
}

func newSQSFeed(t *testing.T, endpoint, name string) *sqsFeed {
	t.Helper()
	c := sqs.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")},
		func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
	f := &sqsFeed{c: c}
	for _, q := range []struct {
		url  *string
		name string
	}{{&f.queue, name}, {&f.dlq, name + "-dlq"}} {
		out, err := c.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String(q.name)})
		if err != nil {
			t.Fatalf("intake queue %s: %v", q.name, err)
		}
		*q.url = aws.ToString(out.QueueUrl)
	}
	return f
}

func (f *sqsFeed) send(t *testing.T, _ string, body string) {
	t.Helper()
	if _, err := f.c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(f.queue), MessageBody: aws.String(body)}); err != nil {
		t.Fatal(err)
	}
}

func (f *sqsFeed) dead(t *testing.T) []deadLetter {
	t.Helper()
	out, err := f.c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(f.dlq), MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"}, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range out.Messages {
		d := deadLetter{Body: aws.ToString(m.Body), Attributes: map[string]string{}}
		for k, v := range m.MessageAttributes {
			d.Attributes[k] = aws.ToString(v.StringValue)
		}
		f.seen = append(f.seen, d)
		_, _ = f.c.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(f.dlq), ReceiptHandle: m.ReceiptHandle})
	}
	return f.seen
}

func (f *sqsFeed) drained(t *testing.T) bool {
	out, err := f.c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(f.queue),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)] == "0" &&
		out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)] == "0"
}

// TestIntakeEndToEnd feeds baton dev's intake queue, on each store, with
// 47 distinct valid messages, 3 duplicates of them (same body, same
// idempotency_key) and 2 invalid ones: exactly 47 runs start (each run's
// scripted model calls an http tool once, which records the run and the
// message's index) and complete for the message's tenant, and the 2
// invalid messages are dead-lettered with the API's error code and
// message in their attributes.
func TestIntakeEndToEnd(t *testing.T) {
	secret := "e2e-intake-secret-" + randomSuffix() + randomSuffix()
	const env = "BATON_E2E_INTAKE_SECRET"
	t.Setenv(env, secret)
	eachStore(t, func(t *testing.T, args []string) {
		tool := newHTTPTool(t, secret)
		args = withAgentsFile(args, writeHTTPToolAgents(t, tool.srv.URL, env))
		var feed intakeFeed
		var name string
		if strings.HasSuffix(t.Name(), "/embedded") { // the embedded stores take a directory feed
			dir := t.TempDir()
			args = append(args, "--intake-dir", dir)
			feed = dirFeed{dir}
		} else {
			name = "baton-e2e-intake-" + randomSuffix()
			args = append(args, "--intake-queue", name)
		}
		d := startDev(t, args)
		if name != "" {
			feed = newSQSFeed(t, os.Getenv("BATON_TEST_SQS_ENDPOINT"), name)
		}
		intakeEndToEnd(t, d, feed, tool)
	})
}

func intakeEndToEnd(t *testing.T, d *dev, feed intakeFeed, tool *httpTool) {
	valid := func(i int) string {
		return fmt.Sprintf(`{"tenant":"acme","idempotency_key":"e2e-intake-%d","agent":"e2e-http","messages":[{"role":"user","content":"stock of %d?"}],`+
			`"metadata":{"index":%d},"model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"call_1","name":"inventory/check_stock","parameters":{"sku":"%d"}}]},{"content":"done"}]}}`, i, i, i, i)
	}
	invalid := map[string]struct{ body, code, message string }{
		"bad-unknown-field": {`{"tenant":"acme","agent":"e2e-http","messages":[{"role":"user","content":"hi"}],"colour":"red"}`, "unknown_field", `unknown field "colour"`},
		"bad-no-messages":   {`{"tenant":"acme","agent":"e2e-http","messages":[]}`, "invalid_request", "messages must hold at least one message"},
	}
	// Duplicates first (their files sort first), then the rest.
	for i := 0; i < 3; i++ {
		feed.send(t, fmt.Sprintf("00-dup-%02d", i), valid(i))
	}
	for i := 0; i < 47; i++ {
		feed.send(t, fmt.Sprintf("10-msg-%02d", i), valid(i))
		if i == 20 {
			for name, c := range invalid {
				feed.send(t, "10-"+name, c.body)
			}
		}
	}

	runsBySku := func() map[string][]string {
		calls, _ := tool.snapshot()
		out := map[string][]string{}
		seen := map[string]bool{}
		for _, c := range calls {
			if !seen[c.body.RunID] {
				seen[c.body.RunID] = true
				sku, _ := c.body.Parameters["sku"].(string)
				out[sku] = append(out[sku], c.body.RunID)
			}
		}
		return out
	}
	var dead []deadLetter
	deadline := time.Now().Add(90 * time.Second)
	for {
		dead = feed.dead(t)
		if n := len(runsBySku()); n >= 47 && len(dead) >= 2 && feed.drained(t) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 90 s: %d runs, %d dead letters", len(runsBySku()), len(dead))
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Every run completes for tenant acme.
	bySku := runsBySku()
	for i := 0; i < 47; i++ {
		runs := bySku[strconv.Itoa(i)]
		if len(runs) != 1 {
			t.Errorf("message %d started %d runs: %v", i, len(runs), runs)
			continue
		}
		if v := d.waitStatus(t, runs[0]); v["status"] != "completed" {
			t.Errorf("run %s of message %d: %v", runs[0], i, v)
		}
	}
	if len(bySku) != 47 {
		t.Errorf("%d distinct messages started runs, want 47", len(bySku))
	}
	if len(dead) != 2 {
		t.Fatalf("%d dead letters, want 2: %+v", len(dead), dead)
	}
	for _, dl := range dead {
		var match bool
		for name, c := range invalid {
			if dl.Body == c.body {
				match = true
				if dl.Attributes["baton_error_code"] != c.code || dl.Attributes["baton_error_message"] != c.message {
					t.Errorf("%s dead-lettered with %v, want %s: %s", name, dl.Attributes, c.code, c.message)
				}
			}
		}
		if !match {
			t.Errorf("unexpected dead letter %+v", dl)
		}
	}

	// Every message is handled: a duplicate that arrived while its
	// original was being started is retried after the queue's visibility
	// timeout, so wait until all three are dropped, then stop baton dev
	// (its pollers finish their batches) and count the outcomes in its log.
	for strings.Count(d.out.String(), "intake duplicate dropped") < 3 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	d.stop(t)
	logs := d.out.String()
	for what, want := range map[string]int{"intake run started": 47, "intake duplicate dropped": 3, "intake message dead-lettered": 2} {
		if got := strings.Count(logs, what); got != want {
			t.Errorf("%d %q log lines, want %d", got, what, want)
		}
	}
}
