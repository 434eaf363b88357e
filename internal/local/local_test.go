package local

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
)

func TestProxyTranslatesAsAPIGateway(t *testing.T) {
	var got events.APIGatewayProxyRequest
	api := func(_ context.Context, r events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		got = r
		return events.APIGatewayProxyResponse{StatusCode: 202, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"ok":true}`}, nil
	}
	srv := httptest.NewServer(Proxy(api, Streams{}, 1<<10, nil))
	defer srv.Close()
	for _, c := range []struct {
		name, body, want string
		base64           bool
	}{
		{"text", `{"agent":"demo"}`, `{"agent":"demo"}`, false},
		{"binary", "\xff\xfe", base64.StdEncoding.EncodeToString([]byte("\xff\xfe")), true},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/runs/r-1/cancel?wait=3&x=1&x=2", strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 202 || string(b) != `{"ok":true}` || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: response %d %q %v", c.name, resp.StatusCode, b, resp.Header)
		}
		if got.HTTPMethod != http.MethodPost || got.Path != "/v1/runs/r-1/cancel" || got.Resource != "/v1/{proxy+}" ||
			got.PathParameters["proxy"] != "runs/r-1/cancel" || got.Headers["Authorization"] != "Bearer tok" ||
			got.QueryStringParameters["wait"] != "3" || len(got.MultiValueQueryStringParameters["x"]) != 2 ||
			got.RequestContext.RequestID == "" || got.Body != c.want || got.IsBase64Encoded != c.base64 {
			t.Errorf("%s: event %+v", c.name, got)
		}
	}
	// An oversized body reaches the handler one byte over the limit, so it
	// can reject it.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/runs", strings.NewReader(strings.Repeat("a", 5000)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(got.Body) != 1<<10+1 {
		t.Errorf("oversized body: handler saw %d bytes, want %d", len(got.Body), 1<<10+1)
	}
}

// fakeReceiver hands out one batch, then nothing, and records deletes.
type fakeReceiver struct {
	mu      sync.Mutex
	batch   []core.ReceivedMessage
	deleted []string
}

func (f *fakeReceiver) Receive(ctx context.Context, _ int, wait time.Duration) ([]core.ReceivedMessage, error) {
	f.mu.Lock()
	b := f.batch
	f.batch = nil
	f.mu.Unlock()
	if b == nil {
		select {
		case <-ctx.Done():
		case <-time.After(wait / 100):
		}
	}
	return b, nil
}

func (f *fakeReceiver) Delete(_ context.Context, h string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, h)
	return nil
}

func (f *fakeReceiver) ExtendVisibility(context.Context, string, time.Duration) error { return nil }

func TestPollDeletesAllButTheFailedMessages(t *testing.T) {
	rcv := &fakeReceiver{batch: []core.ReceivedMessage{
		{MessageID: "m1", ReceiptHandle: "h1", Body: []byte("a"), ReceiveCount: 1, Group: "s-1", DedupID: "d1"},
		{MessageID: "m2", ReceiptHandle: "h2", Body: []byte("b"), ReceiveCount: 2, Group: "s-1", DedupID: "d2"},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	var ev events.SQSEvent
	worker := func(_ context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
		ev = e
		cancel()
		return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "m2"}}}, nil
	}
	Poll(ctx, rcv, worker, slog.New(slog.DiscardHandler))
	if len(ev.Records) != 2 || ev.Records[1].Attributes["ApproximateReceiveCount"] != "2" || ev.Records[0].Attributes["MessageGroupId"] != "s-1" ||
		ev.Records[0].Attributes["MessageDeduplicationId"] != "d1" || ev.Records[0].Body != "a" {
		t.Fatalf("event %+v", ev)
	}
	if len(rcv.deleted) != 1 || rcv.deleted[0] != "h1" {
		t.Fatalf("deleted %v, want [h1]", rcv.deleted)
	}
}

// TestStalledBodyTimesOut: a request whose body stops arriving is
// answered 408 and its connection closed once bodyTimeout passes,
// instead of holding the connection open; a stream served after a
// whole body is not cut by that deadline.
func TestStalledBodyTimesOut(t *testing.T) {
	defer func(d time.Duration) { bodyTimeout = d }(bodyTimeout)
	bodyTimeout = 200 * time.Millisecond
	api := func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{StatusCode: 200, Body: "{}"}, nil
	}
	streams := Streams{Match: func(_, path string) bool { return path == "/stream" }, Handler: func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, func(context.Context, io.Writer, func()) error) {
		return events.APIGatewayProxyResponse{StatusCode: 200}, func(_ context.Context, w io.Writer, flush func()) error {
			for i := range 3 {
				time.Sleep(bodyTimeout)
				fmt.Fprintf(w, "data: %d\n\n", i)
				flush()
			}
			return nil
		}
	}}
	srv := httptest.NewServer(Proxy(api, streams, 1<<10, nil))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"agent\"")
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Fatalf("a stalled body: %d, close %v", resp.StatusCode, resp.Close)
	}
	r, err := http.Post(srv.URL+"/stream", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if b, _ := io.ReadAll(r.Body); strings.Count(string(b), "data:") != 3 {
		t.Fatalf("a stream longer than the body deadline: %q", b)
	}
}
