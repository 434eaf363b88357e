package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/smithy-go/eventstream"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
)

// Frame is one message of an AWS event stream, as Bedrock's
// ConverseStream sends them: an event (Event names its :event-type) or an
// exception (Exception names its :exception-type), with a JSON payload.
type Frame struct {
	Event     string          `json:"event,omitempty"`
	Exception string          `json:"exception,omitempty"`
	Payload   json.RawMessage `json:"payload"`
}

// EncodeFrames encodes frames in the binary event stream format
// (application/vnd.amazon.eventstream), headers as the service sends
// them, payloads compacted.
func EncodeFrames(frames []Frame) ([]byte, error) {
	enc := eventstream.NewEncoder()
	var out bytes.Buffer
	for _, f := range frames {
		var msg eventstream.Message
		if f.Exception != "" {
			msg.Headers.Set(eventstream.ExceptionTypeHeader, eventstream.StringValue(f.Exception))
			msg.Headers.Set(eventstream.ContentTypeHeader, eventstream.StringValue("application/json"))
			msg.Headers.Set(eventstream.MessageTypeHeader, eventstream.StringValue(eventstream.ExceptionMessageType))
		} else {
			msg.Headers.Set(eventstream.EventTypeHeader, eventstream.StringValue(f.Event))
			msg.Headers.Set(eventstream.ContentTypeHeader, eventstream.StringValue("application/json"))
			msg.Headers.Set(eventstream.MessageTypeHeader, eventstream.StringValue(eventstream.EventMessageType))
		}
		var payload bytes.Buffer
		if err := json.Compact(&payload, f.Payload); err != nil {
			return nil, err
		}
		msg.Payload = payload.Bytes()
		if err := enc.Encode(&out, msg); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// Tokens records the token deltas of streamed calls.
type Tokens struct {
	mu sync.Mutex
	d  []core.TokenDelta
}

// Context returns ctx with a token sink that records into r, so a
// provider called with it streams.
func (r *Tokens) Context(ctx context.Context) context.Context {
	return core.WithTokenSink(ctx, func(d core.TokenDelta) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.d = append(r.d, d)
	})
}

// Deltas returns the deltas recorded so far, in order.
func (r *Tokens) Deltas() []core.TokenDelta {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]core.TokenDelta(nil), r.d...)
}

// Text joins the recorded deltas of kind.
func (r *Tokens) Text(kind string) string {
	var b strings.Builder
	for _, d := range r.Deltas() {
		if d.Kind == kind {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

// Token returns a text delta of each of texts.
func Token(texts ...string) []core.TokenDelta { return deltas(core.DeltaToken, texts) }

// Thinking returns a reasoning delta of each of texts.
func Thinking(texts ...string) []core.TokenDelta { return deltas(core.DeltaThinking, texts) }

func deltas(kind string, texts []string) []core.TokenDelta {
	var d []core.TokenDelta
	for _, s := range texts {
		d = append(d, core.TokenDelta{Kind: kind, Text: s})
	}
	return d
}

// StreamCase is a streamed call that succeeds.
type StreamCase struct {
	// Name names the fixture of the streamed responses.
	Name string
	Req  core.ModelRequest
	Want core.ModelReply
	// Deltas are the deltas the call must emit, in order.
	Deltas []core.TokenDelta
	// Buffered, when set, names the fixture of the same completion
	// served whole: the buffered call's reply must equal the streamed
	// one.
	Buffered string
	// Sleeps are the backoff delays the call must take (none when nil).
	Sleeps []time.Duration
}

// Streams asserts that each case's call, made with a token sink, returns
// its reply after its backoff delays and emits exactly its deltas; that
// when the call took one attempt the token deltas join into the reply's
// content; and that the buffered call of the same completion returns the
// same reply.
func (s Suite) Streams(t *testing.T, cases []StreamCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var tokens Tokens
			s.call(t, tokens.Context(context.Background()), tc.Name, tc.Req, tc.Want, tc.Sleeps)
			if d := tokens.Deltas(); !reflect.DeepEqual(d, tc.Deltas) {
				t.Errorf("deltas\n got %q\nwant %q", d, tc.Deltas)
			}
			if text := tokens.Text(core.DeltaToken); tc.Sleeps == nil && text != tc.Want.Content {
				t.Errorf("token deltas join into %q, want the content %q", text, tc.Want.Content)
			}
			if tc.Buffered != "" {
				s.call(t, context.Background(), tc.Buffered, tc.Req, tc.Want, nil)
			}
		})
	}
}

// DecoderCase is a sequence of events fed to a stream decoder.
type DecoderCase struct {
	Name string
	// Events are the data of the events, in order; the last must end the
	// stream and no other may.
	Events []string
	// Want is the reply; its RequestMetadata is not compared when nil.
	Want   core.ModelReply
	Deltas []core.TokenDelta
	// WantErr, when set, is a substring of the error an event or the
	// reply must fail with.
	WantErr string
}

// Decoders feeds each case's events, with a token sink, to a decoder
// newDecoder returns for a response with request id req_1 to a request
// of model m that declares Tools, and asserts the reply or the error and
// the deltas.
func Decoders(t *testing.T, newDecoder func(resp providers.Response, model string, names *providers.ToolNames) providers.StreamDecoder, cases []DecoderCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var tokens Tokens
			ctx := tokens.Context(context.Background())
			d := newDecoder(providers.Response{Status: 200, RequestID: "req_1"}, "m", providers.NewToolNames(Tools()))
			var err error
			for i, ev := range tc.Events {
				var done bool
				if done, err = d.Event(ctx, providers.Event{Data: []byte(ev)}); err != nil {
					break
				}
				if done != (i == len(tc.Events)-1) {
					t.Fatalf("event %d: done %v", i, done)
				}
			}
			var got core.ModelReply
			if err == nil {
				got, err = d.Reply(1)
			}
			if tc.WantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.WantErr) {
					t.Fatalf("error %v, want %q", err, tc.WantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.Want.RequestMetadata == nil {
				got.RequestMetadata = nil
			}
			if !reflect.DeepEqual(got, tc.Want) {
				t.Errorf("reply\n got %#v\nwant %#v", got, tc.Want)
			}
			if !reflect.DeepEqual(tokens.Deltas(), tc.Deltas) {
				t.Errorf("deltas %q, want %q", tokens.Deltas(), tc.Deltas)
			}
		})
	}
}

// StreamedRequest asserts that the golden request testdata/<streamed>
// .request.json is testdata/<buffered>.request.json with flags added:
// each flag has its value, and with the flags removed the two are the
// same request.
func StreamedRequest(t *testing.T, streamed, buffered string, flags map[string]any) {
	t.Helper()
	read := func(name string) map[string]any {
		raw, err := os.ReadFile(filepath.Join("testdata", name+".request.json"))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	s, b := read(streamed), read(buffered)
	for k, want := range flags {
		if got := s[k]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s is %v, want %v", streamed, k, got, want)
		}
		delete(s, k)
		delete(b, k)
	}
	if !reflect.DeepEqual(s, b) {
		t.Errorf("the streamed request %s differs from the buffered %s beyond the flags %v", streamed, buffered, flags)
	}
}

// Reset asserts that a streamed call of req whose every response sends
// head as contentType and then resets the connection fails with a
// transient read error on each attempt, and retryably when the attempts
// run out.
func (s Suite) Reset(t *testing.T, req core.ModelRequest, contentType string, head []byte) {
	t.Helper()
	srv := NewSplit(t, contentType, head, nil)
	var sleeps Sleeps
	_, err := s.Provider(t, srv.URL, &sleeps, nil).Complete(srv.Context(context.Background()), req)
	if err == nil || !core.IsRetryable(err) || !strings.Contains(err.Error(), "after 4 attempts") ||
		!strings.Contains(err.Error(), ": request failed: reading the response stream:") {
		t.Fatalf("want a retryable read error after 4 attempts, got %v", err)
	}
	if len(sleeps.Delays()) != 3 {
		t.Errorf("sleeps %v, want 3", sleeps.Delays())
	}
}

// Split is a server on the loopback interface whose every response sends
// the start of a 200 response (headers and head), waits until the call
// has emitted a delta, and then sends tail and ends the response, or,
// when tail is nil, resets the connection (TCP RST): a call that read the
// whole body before decoding it would wait forever, and a stream can
// break in the middle. Tokens holds the deltas of calls made with
// Context.
type Split struct {
	URL string
	Tokens
	deltas chan struct{}
}

// NewSplit starts a Split serving head and tail as contentType.
func NewSplit(t *testing.T, contentType string, head, tail []byte) *Split {
	t.Helper()
	s := &Split{deltas: make(chan struct{}, 64)}
	stop := make(chan struct{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", contentType, len(head), head)
		if buf.Flush() != nil {
			return
		}
		select {
		case <-s.deltas:
		case <-stop:
		}
		if tail == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // Close sends RST.
			}
			return
		}
		fmt.Fprintf(buf, "%x\r\n%s\r\n0\r\n\r\n", len(tail), tail)
		_ = buf.Flush()
	}))
	srv.Listener = l
	srv.Start()
	t.Cleanup(func() {
		close(stop)
		srv.Close()
	})
	s.URL = srv.URL
	return s
}

// Context returns ctx with a token sink that records the deltas and lets
// the server go on once the call has emitted one.
func (s *Split) Context(ctx context.Context) context.Context {
	return core.WithTokenSink(ctx, func(d core.TokenDelta) {
		s.mu.Lock()
		s.d = append(s.d, d)
		s.mu.Unlock()
		select {
		case s.deltas <- struct{}{}:
		default:
		}
	})
}
