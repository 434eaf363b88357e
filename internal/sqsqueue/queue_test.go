package sqsqueue

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/baton-agents/baton/core"
)

// fakeSQS is an SQS JSON-protocol endpoint that records requests and
// answers with respond, or by default with success.
type fakeSQS struct {
	mu      sync.Mutex
	calls   []fakeCall
	respond func(action string, body map[string]any) (status int, header http.Header, resp any)
}

type fakeCall struct {
	Action string
	Body   map[string]any
}

func (f *fakeSQS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	action := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{action, body})
	f.mu.Unlock()
	status, header, resp := http.StatusOK, http.Header(nil), any(map[string]any{})
	if f.respond != nil {
		status, header, resp = f.respond(action, body)
	} else if action == "SendMessageBatch" {
		resp = allSent(body)
	}
	for k, vs := range header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

func (f *fakeSQS) Calls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// allSent answers a SendMessageBatch with every entry sent; the SDK checks
// the body digests.
func allSent(body map[string]any) map[string]any {
	var ok []map[string]any
	for _, e := range body["Entries"].([]any) {
		e := e.(map[string]any)
		sum := md5.Sum([]byte(e["MessageBody"].(string)))
		ok = append(ok, map[string]any{"Id": e["Id"], "MessageId": "m-" + e["Id"].(string), "MD5OfMessageBody": hex.EncodeToString(sum[:])})
	}
	return map[string]any{"Successful": ok}
}

func newFake(t *testing.T, f *fakeSQS) *Queue {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := sqs.New(sqs.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("k", "s", ""),
		RetryMaxAttempts: 1,
	})
	return New(client, "http://sqs.us-east-1.localhost/000000000000/steps.fifo")
}

func queued(n int, group string) []core.QueuedStep {
	var out []core.QueuedStep
	for i := 1; i <= n; i++ {
		s := core.Step{Kind: core.StepModelTurn, Format: core.StepFormat, RunID: "r-1", Seq: int64(i)}
		out = append(out, core.QueuedStep{Step: s, Group: group, DedupID: "r-1:" + strconv.Itoa(i)})
	}
	return out
}

func TestSQSID(t *testing.T) {
	long := strings.Repeat("a", 129)
	tests := []struct {
		name string
		id   string
		kept bool
	}{
		{"short", "s-1", true},
		{"punctuation", `r-1:call_1/!"#$%&'()*+,-./:;<=>?@[\]^_{|}~` + "`", true},
		{"128 chars", strings.Repeat("a", 128), true},
		{"129 chars", long, false},
		{"space", "session 1", false},
		{"non-ASCII", "sessión", false},
		{"control", "s\t1", false},
		{"refused first", " s-1", false},
		{"refused last", "s-1 ", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sqsID(tc.id)
			if tc.kept {
				if got != tc.id {
					t.Errorf("sqsID(%q) = %q, want it unchanged", tc.id, got)
				}
				return
			}
			if len(got) > maxIDLen || strings.IndexFunc(got, refused) >= 0 {
				t.Errorf("sqsID(%q) = %q: not a valid SQS id", tc.id, got)
			}
			if got == tc.id || sqsID(tc.id) != got {
				t.Errorf("sqsID(%q) = %q: want a deterministic stand-in", tc.id, got)
			}
		})
	}
	if sqsID(long+"x") == sqsID(long+"y") {
		t.Error("ids differing past the prefix map to the same stand-in")
	}
	if got := sqsID("sessión"); !strings.HasPrefix(got, "sessi_n~") {
		t.Errorf("stand-in %q does not keep a readable prefix", got)
	}
}

func TestEnqueueBatches(t *testing.T) {
	f := &fakeSQS{}
	q := newFake(t, f)
	group := strings.Repeat("session ", 20) // needs a stand-in
	steps := queued(23, group)
	if err := q.Enqueue(t.Context(), steps); err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	calls := f.Calls()
	var sizes []int
	i := 0
	for _, c := range calls {
		if c.Action != "SendMessageBatch" {
			t.Fatalf("action %s, want SendMessageBatch", c.Action)
		}
		if c.Body["QueueUrl"] != q.URL() {
			t.Errorf("QueueUrl %v, want %s", c.Body["QueueUrl"], q.URL())
		}
		entries := c.Body["Entries"].([]any)
		sizes = append(sizes, len(entries))
		for _, e := range entries {
			e := e.(map[string]any)
			want, _ := json.Marshal(steps[i].Step)
			if e["Id"] != strconv.Itoa(i) || e["MessageBody"] != string(want) ||
				e["MessageGroupId"] != sqsID(group) || e["MessageDeduplicationId"] != steps[i].DedupID {
				t.Errorf("entry %d = %v", i, e)
			}
			i++
		}
	}
	if len(sizes) != 3 || sizes[0] != 10 || sizes[1] != 10 || sizes[2] != 3 {
		t.Errorf("batch sizes %v, want [10 10 3]", sizes)
	}
}

func TestEnqueueRejectsMissingIDs(t *testing.T) {
	f := &fakeSQS{}
	q := newFake(t, f)
	steps := queued(12, "g")
	steps[11].DedupID = ""
	err := q.Enqueue(t.Context(), steps)
	if !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("error %v, want core.ErrInvalidInput", err)
	}
	if n := len(f.Calls()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestEnqueueErrors(t *testing.T) {
	apiError := func(status int, typ, queryCode string) func(string, map[string]any) (int, http.Header, any) {
		return func(string, map[string]any) (int, http.Header, any) {
			h := http.Header{}
			if queryCode != "" {
				h.Set("X-Amzn-Query-Error", queryCode)
			}
			return status, h, map[string]any{"__type": "com.amazonaws.sqs#" + typ, "message": typ + " happened"}
		}
	}
	failEntry := func(code string, senderFault bool) func(string, map[string]any) (int, http.Header, any) {
		return func(_ string, body map[string]any) (int, http.Header, any) {
			resp := allSent(body)
			ok := resp["Successful"].([]map[string]any)
			resp["Successful"] = ok[:len(ok)-1]
			resp["Failed"] = []map[string]any{{"Id": ok[len(ok)-1]["Id"], "Code": code, "Message": "entry " + code, "SenderFault": senderFault}}
			return http.StatusOK, nil, resp
		}
	}
	tests := []struct {
		name      string
		respond   func(string, map[string]any) (int, http.Header, any)
		retryable bool
		notFound  bool
		mentions  string
	}{
		{"entry refused", failEntry("InvalidParameterValue", true), false, false, "r-1/3"},
		{"entry server fault", failEntry("InternalError", false), true, false, "InternalError"},
		{"entry throttled", failEntry("RequestThrottled", true), true, false, "RequestThrottled"},
		{"http 500", apiError(500, "InternalError", ""), true, false, "InternalError"},
		{"the steps it was sending", apiError(500, "InternalError", ""), true, false, "enqueue steps 1-3 of 3"},
		{"http 503 unmodelled", apiError(503, "ServiceUnavailable", "ServiceUnavailable;Receiver"), true, false, "ServiceUnavailable"},
		{"throttling", apiError(400, "ThrottlingException", "Throttling;Sender"), true, false, "Throttling"},
		{"request throttled, query code", apiError(400, "RequestThrottled", "AWS.SimpleQueueService.RequestThrottled;Sender"), true, false, "RequestThrottled"},
		{"queue missing", apiError(400, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue;Sender"), false, true, "QueueDoesNotExist"},
		{"access denied", apiError(400, "AccessDeniedException", ""), false, false, "AccessDenied"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newFake(t, &fakeSQS{respond: tc.respond})
			err := q.Enqueue(t.Context(), queued(3, "g"))
			if err == nil {
				t.Fatal("enqueue succeeded, want an error")
			}
			if got := core.IsRetryable(err); got != tc.retryable {
				t.Errorf("retryable = %v, want %v: %v", got, tc.retryable, err)
			}
			if got := errors.Is(err, core.ErrNotFound); got != tc.notFound {
				t.Errorf("not found = %v, want %v: %v", got, tc.notFound, err)
			}
			if !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("error %q does not mention %q", err, tc.mentions)
			}
		})
	}
}

func TestReceive(t *testing.T) {
	sent := time.UnixMilli(1767225600123)
	f := &fakeSQS{respond: func(action string, _ map[string]any) (int, http.Header, any) {
		sum := md5.Sum([]byte(`{"kind":"model_turn"}`))
		return http.StatusOK, nil, map[string]any{"Messages": []map[string]any{{
			"MessageId": "m-1", "ReceiptHandle": "rh-1", "Body": `{"kind":"model_turn"}`,
			"MD5OfBody": hex.EncodeToString(sum[:]),
			"Attributes": map[string]string{
				"ApproximateReceiveCount": "3", "MessageGroupId": "s-1",
				"MessageDeduplicationId": "r-1:4", "SentTimestamp": strconv.FormatInt(sent.UnixMilli(), 10),
			},
		}}}
	}}
	q := newFake(t, f)
	tests := []struct {
		limit    int
		wait     time.Duration
		wantMax  float64
		wantWait float64
	}{
		{0, 0, 1, 0},
		{5, 300 * time.Millisecond, 5, 1},
		{10, 1500 * time.Millisecond, 10, 2},
		{25, time.Minute, 10, 20},
	}
	for _, tc := range tests {
		ds, err := q.Receive(t.Context(), tc.limit, tc.wait)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		calls := f.Calls()
		body := calls[len(calls)-1].Body
		// The SDK leaves a zero WaitTimeSeconds out of the request.
		wait, _ := body["WaitTimeSeconds"].(float64)
		if body["MaxNumberOfMessages"] != tc.wantMax || wait != tc.wantWait {
			t.Errorf("Receive(%d, %v) asked for %v messages waiting %v s; want %v, %v",
				tc.limit, tc.wait, body["MaxNumberOfMessages"], body["WaitTimeSeconds"], tc.wantMax, tc.wantWait)
		}
		if id, _ := body["ReceiveRequestAttemptId"].(string); id == "" {
			t.Error("no ReceiveRequestAttemptId")
		}
		names, _ := json.Marshal(body["MessageSystemAttributeNames"])
		for _, n := range []string{"ApproximateReceiveCount", "MessageGroupId", "MessageDeduplicationId", "SentTimestamp"} {
			if !strings.Contains(string(names), `"`+n+`"`) {
				t.Errorf("MessageSystemAttributeNames %s lacks %s", names, n)
			}
		}
		if len(ds) != 1 {
			t.Fatalf("got %d deliveries, want 1", len(ds))
		}
		d := ds[0]
		if d.MessageID != "m-1" || d.ReceiptHandle != "rh-1" || string(d.Body) != `{"kind":"model_turn"}` ||
			d.ReceiveCount != 3 || d.Group != "s-1" || d.DedupID != "r-1:4" || !d.SentAt.Equal(sent) {
			t.Errorf("delivery %+v", d)
		}
	}
}

func TestDeleteErrors(t *testing.T) {
	tests := []struct {
		name      string
		typ, msg  string
		notFound  bool
		retryable bool
	}{
		{"expired", "InvalidParameterValue", "Value rh for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.", true, false},
		{"invalid", "ReceiptHandleIsInvalid", "The input receipt handle is invalid.", true, false},
		{"server", "InternalError", "boom", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newFake(t, &fakeSQS{respond: func(string, map[string]any) (int, http.Header, any) {
				status := 400
				if tc.retryable {
					status = 500
				}
				return status, nil, map[string]any{"__type": "com.amazonaws.sqs#" + tc.typ, "message": tc.msg}
			}})
			err := q.Delete(t.Context(), "rh")
			if err == nil {
				t.Fatal("delete succeeded, want an error")
			}
			if errors.Is(err, core.ErrNotFound) != tc.notFound || core.IsRetryable(err) != tc.retryable {
				t.Errorf("error %v: want not found %v, retryable %v", err, tc.notFound, tc.retryable)
			}
		})
	}
}

func TestValidateCreate(t *testing.T) {
	tests := []struct {
		name        string
		queue       string
		visibility  time.Duration
		maxReceives int
		ok          bool
	}{
		{"fine", "baton-steps_1", 30 * time.Second, 5, true},
		{"longest name", strings.Repeat("n", maxNameLen), 0, 1, true},
		{"empty name", "", time.Second, 5, false},
		{"name too long", strings.Repeat("n", maxNameLen+1), time.Second, 5, false},
		{"each range's ends", "09azAZ-_", time.Second, 5, true},
		{"dot in name", "steps.fifo", time.Second, 5, false},
		{"just below 0", "steps/", time.Second, 5, false},
		{"just above 9", "steps:", time.Second, 5, false},
		{"just below a", "steps`", time.Second, 5, false},
		{"just above z", "steps{", time.Second, 5, false},
		{"just below A", "steps@", time.Second, 5, false},
		{"just above Z", "steps[", time.Second, 5, false},
		{"negative visibility", "steps", -time.Second, 5, false},
		{"visibility over 12h", "steps", 13 * time.Hour, 5, false},
		{"no receives", "steps", time.Second, 0, false},
		{"too many receives", "steps", time.Second, 1001, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := validateCreate(tc.queue, tc.visibility, tc.maxReceives)
			if (err == nil) != tc.ok {
				t.Errorf("validateCreate = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, core.ErrInvalidInput) {
				t.Errorf("error %v, want core.ErrInvalidInput", err)
			}
		})
	}
}

// TestBatchError: a failed entry of the batch steps[start:end] is named by
// its step when its id is an index in the batch, by its id otherwise, and
// the error names the batch's steps counted from 1.
func TestBatchError(t *testing.T) {
	steps := queued(12, "g")
	for _, tc := range []struct {
		id   string
		want string
	}{
		{"10", `r-1/11 (group "g")`}, // the batch's first
		{"11", `r-1/12 (group "g")`}, // its last
		{"9", "entry 9"},             // before the batch
		{"12", "entry 12"},           // past it
		{"x", "entry x"},
	} {
		err := batchError(steps, 10, 12, []types.BatchResultErrorEntry{{Id: aws.String(tc.id), Code: aws.String("InternalError"), Message: aws.String("oops")}})
		want := "enqueue steps 11-12 of 12: 1 not sent: " + tc.want + ": InternalError: oops (server fault)"
		if err == nil || err.Error() != want {
			t.Errorf("id %q: %v, want %q", tc.id, err, want)
		}
	}
}

// TestExtendVisibilitySeconds: an extension is asked in whole seconds,
// rounded up, at most 12 hours.
func TestExtendVisibilitySeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want float64
	}{
		{0, 0},
		{time.Nanosecond, 1},
		{time.Second, 1},
		{time.Second + time.Nanosecond, 2},
		{1500 * time.Millisecond, 2},
		{12 * time.Hour, 43200},
		{13 * time.Hour, 43200},
	} {
		f := &fakeSQS{}
		q := newFake(t, f)
		if err := q.ExtendVisibility(t.Context(), "rh", tc.d); err != nil {
			t.Fatal(err)
		}
		calls := f.Calls()
		if len(calls) != 1 || calls[0].Action != "ChangeMessageVisibility" || calls[0].Body["VisibilityTimeout"] != tc.want {
			t.Errorf("extend by %v: %+v, want a VisibilityTimeout of %v", tc.d, calls, tc.want)
		}
	}
}
