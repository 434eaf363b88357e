package providers

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestReadSSE(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []Event
	}{
		{name: "data only", in: "data: {\"a\":1}\n\ndata: [DONE]\n\n",
			want: []Event{{Data: []byte(`{"a":1}`)}, {Data: []byte("[DONE]")}}},
		{name: "named events", in: "event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
			want: []Event{{Name: "message_start", Data: []byte("{}")}, {Name: "ping", Data: []byte(`{"type": "ping"}`)}}},
		{name: "CRLF line ends", in: "event: e\r\ndata: x\r\n\r\n",
			want: []Event{{Name: "e", Data: []byte("x")}}},
		{name: "data lines joined, one space dropped", in: "data:a\ndata:  b\ndata\n\n",
			want: []Event{{Data: []byte("a\n b\n")}}},
		{name: "comments, ids, retry and unknown fields ignored", in: ": keep-alive\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\n",
			want: []Event{{Data: []byte("x")}}},
		{name: "an event without data is not dispatched", in: "event: nothing\n\n: ping\n\ndata: x\n\n",
			want: []Event{{Data: []byte("x")}}},
		{name: "the event name does not carry over", in: "event: a\ndata: 1\n\ndata: 2\n\n",
			want: []Event{{Name: "a", Data: []byte("1")}, {Data: []byte("2")}}},
		{name: "an event cut off by the end is not dispatched", in: "data: 1\n\ndata: {\"cut",
			want: []Event{{Data: []byte("1")}}},
		{name: "empty", in: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []Event
			// One byte per read: events must not depend on read sizes.
			err := ReadSSE(&oneByte{strings.NewReader(tc.in)}, func(ev Event) error {
				got = append(got, ev)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("events\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestReadSSEStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := ReadSSE(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n"), func(Event) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Errorf("err %v after %d events, want stop after 2", err, n)
	}
	broken := io.MultiReader(strings.NewReader("data: 1\n\n"), &failing{})
	if err := ReadSSE(broken, func(Event) error { return nil }); !errors.Is(err, errBroken) {
		t.Errorf("read error: %v", err)
	}
}

func TestReadSSETooLarge(t *testing.T) {
	for name, r := range map[string]io.Reader{
		"one long line":    &repeat{b: 'x'},
		"many short lines": &repeat{b: '\n'},
	} {
		t.Run(name, func(t *testing.T) {
			err := ReadSSE(r, func(Event) error { return nil })
			if !errors.Is(err, ErrStreamTooLarge) {
				t.Errorf("err %v, want ErrStreamTooLarge", err)
			}
		})
	}
	exact := io.MultiReader(strings.NewReader("data: 1\n\n"), io.LimitReader(&repeat{b: '\n'}, MaxResponseBytes-9))
	if err := ReadSSE(exact, func(Event) error { return nil }); err != nil {
		t.Errorf("a stream of exactly MaxResponseBytes: %v", err)
	}
}

type oneByte struct{ r io.Reader }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

var errBroken = errors.New("connection reset by peer")

type failing struct{}

func (*failing) Read([]byte) (int, error) { return 0, errBroken }

// repeat is an endless stream of one byte.
type repeat struct{ b byte }

func (r *repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.b
	}
	return len(p), nil
}

func TestStreamError(t *testing.T) {
	cases := []struct {
		data      string
		code      string
		transient bool
	}{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", true},
		{`{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}`, "rate_limit_error", true},
		{`{"type":"error","error":{"type":"api_error","message":"Internal"}}`, "api_error", true},
		{`{"type":"error","error":{"type":"invalid_request_error","message":"Bad"}}`, "invalid_request_error", false},
		{`{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`, "server_error", true},
		{`{"error":{"message":"Quota","type":"insufficient_quota","code":"insufficient_quota"}}`, "insufficient_quota", false},
		{`{"error":{"object":"error","message":"Overloaded","type":"ServiceUnavailableError","code":503}}`, "ServiceUnavailableError", true},
		{`{"error":{"object":"error","message":"Too long","type":"BadRequestError","code":400}}`, "BadRequestError", false},
		{`{"error":{"message":"Something","type":"mystery"}}`, "mystery", false},
	}
	for _, tc := range cases {
		e := StreamError("p", "req_1", []byte(tc.data))
		if e.Code != tc.code || e.Transient != tc.transient || !e.MidStream || e.Status != 0 {
			t.Errorf("%s: code %q transient %v midstream %v status %d, want %q %v", tc.data, e.Code, e.Transient, e.MidStream, e.Status, tc.code, tc.transient)
		}
	}
	e := StreamError("anthropic", "req_9", []byte(cases[0].data))
	if want := "anthropic: overloaded_error: Overloaded (sent in the response stream) (request id req_9)"; e.Error() != want {
		t.Errorf("error text %q, want %q", e.Error(), want)
	}
}
