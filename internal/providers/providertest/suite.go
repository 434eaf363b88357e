package providertest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
)

// Suite runs the replay tests every provider shares: each case replays
// testdata/<case>.json against a provider built for that server.
type Suite struct {
	// New builds the provider under test on the server at url, with the
	// retry policy Policy(sleeps) and log.
	New func(url string, sleeps *Sleeps, log *slog.Logger) (core.ModelProvider, error)
	// Check returns the assertions (path, headers) on every request of a
	// call to model.
	Check func(model string) func(t *testing.T, r Request)
	// StreamCheck, when not nil, replaces Check for streamed calls.
	StreamCheck func(model string) func(t *testing.T, r Request)
	// Secret is the credential that must appear in no error and no log
	// line.
	Secret string
}

// check returns the assertions on the requests of a call to model made
// with ctx.
func (s Suite) check(ctx context.Context, model string) func(t *testing.T, r Request) {
	if s.StreamCheck != nil && core.StreamsTokens(ctx) {
		return s.StreamCheck(model)
	}
	return s.Check(model)
}

// Provider builds the provider under test with New, failing t on an
// error.
func (s Suite) Provider(t *testing.T, url string, sleeps *Sleeps, log *slog.Logger) core.ModelProvider {
	t.Helper()
	p, err := s.New(url, sleeps, log)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ReplyCase is a call that succeeds.
type ReplyCase struct {
	Name string
	Req  core.ModelRequest
	Want core.ModelReply
	// Sleeps are the backoff delays the call must take (none when nil).
	Sleeps []time.Duration
}

// Replies asserts that each case's call returns its reply after exactly
// its backoff delays.
func (s Suite) Replies(t *testing.T, cases []ReplyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s.call(t, context.Background(), tc.Name, tc.Req, tc.Want, tc.Sleeps)
		})
	}
}

// call replays testdata/<name>.json to a call of req with ctx and asserts
// that it returns want after exactly the backoff delays sleeps.
func (s Suite) call(t *testing.T, ctx context.Context, name string, req core.ModelRequest, want core.ModelReply, sleeps []time.Duration) {
	t.Helper()
	srv := Replay(t, name, s.check(ctx, req.Model.Model))
	var slept Sleeps
	got, err := s.Provider(t, srv.URL, &slept, nil).Complete(ctx, req)
	if err != nil {
		t.Fatalf("%s: Complete: %v", name, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: reply\n got %#v\nwant %#v", name, got, want)
	}
	if d := slept.Delays(); !reflect.DeepEqual(d, sleeps) && (len(d) > 0 || len(sleeps) > 0) {
		t.Errorf("%s: sleeps %v, want %v", name, d, sleeps)
	}
}

// ErrorCase is a call that fails.
type ErrorCase struct {
	Name      string
	Req       core.ModelRequest
	Retryable bool
	// Requests is how many requests the call must send.
	Requests int
	// Contains are substrings of the error's text.
	Contains []string
	// Sleeps, when not nil, are the backoff delays the call must take.
	Sleeps []time.Duration
	// ReplyError marks an error about the content of a 2xx reply, which
	// is not a *providers.Error; every other error must be one.
	ReplyError bool
	// Stream makes the call with a token sink, so that it streams.
	Stream bool
}

// Errors asserts each case's error: whether it is retryable, what it
// says, how many requests it took, and that it and the logs hold no
// secret.
func (s Suite) Errors(t *testing.T, cases []ErrorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			ctx := context.Background()
			if tc.Stream {
				ctx = (&Tokens{}).Context(ctx)
			}
			srv := Replay(t, tc.Name, s.check(ctx, tc.Req.Model.Model))
			var sleeps Sleeps
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			_, err := s.Provider(t, srv.URL, &sleeps, log).Complete(ctx, tc.Req)
			if err == nil {
				t.Fatal("Complete succeeded")
			}
			if core.IsRetryable(err) != tc.Retryable {
				t.Errorf("IsRetryable = %v, want %v (%v)", core.IsRetryable(err), tc.Retryable, err)
			}
			var pe *providers.Error
			if !tc.ReplyError && !errors.As(err, &pe) {
				t.Errorf("error %v is not a *providers.Error", err)
			}
			for _, sub := range tc.Contains {
				if !strings.Contains(err.Error(), sub) {
					t.Errorf("error %q does not contain %q", err, sub)
				}
			}
			if strings.Contains(err.Error(), s.Secret) || strings.Contains(logs.String(), s.Secret) {
				t.Errorf("the secret leaked: %v\n%s", err, logs.String())
			}
			if n := len(srv.Requests()); n != tc.Requests {
				t.Errorf("%d requests, want %d", n, tc.Requests)
			}
			if tc.Sleeps != nil && !reflect.DeepEqual(sleeps.Delays(), tc.Sleeps) {
				t.Errorf("sleeps %v, want %v", sleeps.Delays(), tc.Sleeps)
			}
		})
	}
}

// Leak replays testdata/leak_5xx.json, whose error bodies echo the
// secret, and asserts that req fails retryably and that the secret is in
// neither the error nor the debug logs. It returns the logs and the error
// for further checks.
func (s Suite) Leak(t *testing.T, req core.ModelRequest) (string, error) {
	t.Helper()
	srv := Replay(t, "leak_5xx", s.Check(req.Model.Model))
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var sleeps Sleeps
	_, err := s.Provider(t, srv.URL, &sleeps, log).Complete(context.Background(), req)
	if err == nil || !core.IsRetryable(err) {
		t.Fatalf("want a retryable error, got %v", err)
	}
	if strings.Contains(err.Error(), s.Secret) || strings.Contains(logs.String(), s.Secret) {
		t.Fatalf("the secret leaked:\nerror: %v\nlogs: %s", err, logs.String())
	}
	return logs.String(), err
}

// RefusesOptions asserts that p fails permanently on Plain(spec) with
// each of opts as the spec's options.
func RefusesOptions(t *testing.T, p core.ModelProvider, spec core.ModelSpec, opts ...map[string]any) {
	t.Helper()
	for _, o := range opts {
		s := spec
		s.Options = o
		if _, err := p.Complete(context.Background(), Plain(s)); err == nil || core.IsRetryable(err) {
			t.Errorf("options %v: want a permanent error, got %v", o, err)
		}
	}
}

// HTTPSuite is the Suite of a provider that newProvider builds on a
// providers.ClientConfig: its BaseURL is the replay server's URL followed
// by path, its APIKey is key (the secret that must not leak), and every
// request must pass check.
func HTTPSuite[P core.ModelProvider](newProvider func(providers.ClientConfig) (P, error), path, key string, check func(*testing.T, Request)) Suite {
	return Suite{
		New: func(url string, sleeps *Sleeps, log *slog.Logger) (core.ModelProvider, error) {
			p, err := newProvider(providers.ClientConfig{BaseURL: url + path, APIKey: key, Retry: Policy(sleeps), Log: log})
			if err != nil {
				return nil, err
			}
			return p, nil
		},
		Check:  func(string) func(*testing.T, Request) { return check },
		Secret: key,
	}
}

// Want returns the assertion that a request went to path with header:
// each named header has its value, and an empty value means absent.
func Want(path string, header map[string]string) func(t *testing.T, r Request) {
	return func(t *testing.T, r Request) {
		t.Helper()
		if r.Path != path {
			t.Errorf("path %s, want %s", r.Path, path)
		}
		for _, k := range slices.Sorted(maps.Keys(header)) {
			if got, want := r.Header.Get(k), header[k]; got != want {
				t.Errorf("%s header %q, want %q", k, got, want)
			}
		}
	}
}

// Usage is the usage of a reply that reports prompt and completion tokens
// and nothing else.
func Usage(prompt, completion int64) map[string]any {
	return map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
}

// Meta is the request metadata of a reply that took one attempt: the
// provider, the model and the request id, and the response id when not
// empty.
func Meta(provider, model, requestID, responseID string) map[string]any {
	m := map[string]any{"provider": provider, "model": model, "request_id": requestID}
	if responseID != "" {
		m["response_id"] = responseID
	}
	return m
}

// Encoded is what ToolHistory reads from a provider's encoded request:
// its native tool blocks (calls and results), the tools it declares, its
// text, its message roles, and a dump for failure messages.
type Encoded struct {
	ToolBlocks int
	Tools      int
	Text       string
	Roles      []string
	Dump       string
}

// ToolHistory checks that a transcript with tool calls and results (the
// Transcript request) is sent as text when the request declares no tools,
// and with native tool blocks (two calls, two results, two tools) when it
// declares them. encode builds the provider's request and reads it.
func ToolHistory(t *testing.T, spec core.ModelSpec, encode func(t *testing.T, req core.ModelRequest) Encoded) {
	t.Helper()
	t.Run("no tools declared", func(t *testing.T) {
		req := Transcript(spec)
		req.Tools = nil
		got := encode(t, req)
		if got.ToolBlocks != 0 || got.Tools != 0 {
			t.Errorf("request without tools has %d tool blocks and %d tools:\n%s", got.ToolBlocks, got.Tools, got.Dump)
		}
		for _, w := range []string{
			`[called tool client/get_calendar (call call_cal) with {"day":"monday"}]`,
			`[called tool ability/send_email (call call_mail) with {"body":"Standup at 9","priority":2,"to":"bob@example.com"}]`,
			"[result of tool client/get_calendar (call call_cal): ok]\n{\"events\":[\"09:00 standup\"]}",
			"[result of tool ability/send_email (call call_mail): failed]\nThe approver rejected this action: not now",
		} {
			if !strings.Contains(got.Text, w) {
				t.Errorf("text of the request lacks %q:\n%s", w, got.Text)
			}
		}
		if want := []string{"user", "assistant", "user"}; !slices.Equal(got.Roles, want) {
			t.Errorf("roles %v, want %v:\n%s", got.Roles, want, got.Dump)
		}
	})
	t.Run("tools declared", func(t *testing.T) {
		got := encode(t, Transcript(spec))
		if got.ToolBlocks != 4 || got.Tools != 2 {
			t.Errorf("%d tool blocks and %d tools, want 4 and 2:\n%s", got.ToolBlocks, got.Tools, got.Dump)
		}
	})
}
