package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/notify"
)

// recordedEntry is a PutEvents request entry as the wire carries it.
type recordedEntry struct {
	Source       string
	DetailType   string
	Detail       string
	EventBusName string
	Time         json.Number
}

// fakeEventBridge records PutEvents requests and answers them, failing
// the entries whose detail names a notification in failOnce the first
// time it is sent.
type fakeEventBridge struct {
	mu       sync.Mutex
	requests [][]recordedEntry
	targets  []string
	auths    []string
	failOnce map[string]bool
}

func (f *fakeEventBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var in struct{ Entries []recordedEntry }
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, in.Entries)
	f.targets = append(f.targets, r.Header.Get("X-Amz-Target"))
	f.auths = append(f.auths, r.Header.Get("Authorization"))
	type result struct {
		EventId      string `json:",omitempty"`
		ErrorCode    string `json:",omitempty"`
		ErrorMessage string `json:",omitempty"`
	}
	var out struct {
		FailedEntryCount int
		Entries          []result
	}
	for i, e := range in.Entries {
		var d struct {
			EventID string `json:"event_id"`
		}
		_ = json.Unmarshal([]byte(e.Detail), &d)
		if f.failOnce[d.EventID] {
			delete(f.failOnce, d.EventID)
			out.FailedEntryCount++
			out.Entries = append(out.Entries, result{ErrorCode: "InternalFailure", ErrorMessage: "try again"})
			continue
		}
		out.Entries = append(out.Entries, result{EventId: fmt.Sprintf("eb-%d-%d", len(f.requests), i)})
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func newFake(t *testing.T, failOnce ...string) (*fakeEventBridge, *awsenv.JSONClient) {
	t.Helper()
	f := &fakeEventBridge{failOnce: map[string]bool{}}
	for _, id := range failOnce {
		f.failOnce[id] = true
	}
	srv := httptest.NewUnstartedServer(f)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	c := awsenv.EventBridge(aws.Config{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		RetryMaxAttempts: 1,
	})
	return f, c
}

var tn = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func notes(n int) []core.Notification {
	out := make([]core.Notification, n)
	for i := range out {
		id := fmt.Sprintf("r-1:%d:paused", i+1)
		out[i] = core.Notification{ID: id, RunID: "r-1", DetailType: core.NotificationPaused,
			Detail: json.RawMessage(fmt.Sprintf(`{"event_id":%q,"status":"approval_required"}`, id)), Time: tn.Add(time.Duration(i) * time.Second)}
	}
	return out
}

func TestEventBridgeEntryShapeAndBatches(t *testing.T) {
	f, c := newFake(t)
	p := notify.NewEventBridge(c, "baton-bus")
	ns := notes(23)
	if err := p.Publish(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	if len(f.requests) != 3 || len(f.requests[0]) != 10 || len(f.requests[1]) != 10 || len(f.requests[2]) != 3 {
		t.Fatalf("batches: %d requests", len(f.requests))
	}
	if f.targets[0] != "AWSEvents.PutEvents" {
		t.Fatalf("target %q", f.targets[0])
	}
	if !strings.Contains(f.auths[0], "Credential=AKID/") || !strings.Contains(f.auths[0], "/us-east-1/events/aws4_request") {
		t.Fatalf("not signed for EventBridge: %q", f.auths[0])
	}
	e := f.requests[1][2]
	want := ns[12]
	if e.Source != "baton" || e.DetailType != "Baton Run Paused" || e.Detail != string(want.Detail) || e.EventBusName != "baton-bus" {
		t.Fatalf("entry: %+v", e)
	}
	if sec, err := e.Time.Float64(); err != nil || int64(sec) != want.Time.Unix() {
		t.Fatalf("entry time %s, want %d", e.Time, want.Time.Unix())
	}
}

func TestEventBridgeRetriesOnlyFailedEntries(t *testing.T) {
	ns := notes(4)
	f, c := newFake(t, ns[1].ID, ns[3].ID)
	p := notify.NewEventBridge(c, "")
	p.Backoff = time.Millisecond
	if err := p.Publish(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	if len(f.requests) != 2 || len(f.requests[0]) != 4 || len(f.requests[1]) != 2 {
		t.Fatalf("requests: %+v", f.requests)
	}
	for i, id := range []string{ns[1].ID, ns[3].ID} {
		if !strings.Contains(f.requests[1][i].Detail, id) {
			t.Fatalf("retry %d: %s, want %s", i, f.requests[1][i].Detail, id)
		}
	}
	if f.requests[0][0].EventBusName != "" {
		t.Fatalf("default bus: got %q", f.requests[0][0].EventBusName)
	}
}

func TestEventBridgeGivesUp(t *testing.T) {
	ns := notes(2)
	f, c := newFake(t, ns[0].ID)
	p := notify.NewEventBridge(c, "")
	p.Attempts, p.Backoff = 1, time.Millisecond
	err := p.Publish(context.Background(), ns)
	if err == nil || !strings.Contains(err.Error(), ns[0].ID) || !strings.Contains(err.Error(), "InternalFailure") {
		t.Fatalf("got %v", err)
	}
	if len(f.requests) != 1 {
		t.Fatalf("requests: %d", len(f.requests))
	}
}

func TestPoster(t *testing.T) {
	var mu sync.Mutex
	var got []notify.Event
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		var e notify.Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}))
	defer srv.Close()
	ns := notes(2)
	if err := (&notify.Poster{URL: srv.URL}).Publish(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Source != "baton" || got[1].DetailType != core.NotificationPaused || string(got[1].Detail) != string(ns[1].Detail) {
		t.Fatalf("posted: %+v", got)
	}
	if err := (&notify.Poster{URL: srv.URL + "/fail"}).Publish(context.Background(), ns); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("a 503: got %v", err)
	}
}
