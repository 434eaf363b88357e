package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	in := ": hello\n\nid: 1\nevent: run_started\ndata: {\"a\":1}\n\n" +
		"event: token\ndata:{\"delta\":\"x\"}\nretry: 5\n\n" +
		"event: end\nretry: 5s\ndata: {}\n\n" +
		"data: line one\ndata: line two\n\n: keep-alive\n\n"
	r := NewReader(strings.NewReader(in))
	got, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{{ID: "1", Event: "run_started", Data: `{"a":1}`}, {Event: "token", Data: `{"delta":"x"}`, Retry: 5}, {Event: "end", Data: "{}"}, {Data: "line one\nline two"}}
	if !reflect.DeepEqual(got, want) || r.Comments != 2 {
		t.Fatalf("got %+v (%d comments)", got, r.Comments)
	}
}

func TestReaderTruncated(t *testing.T) {
	r := NewReader(strings.NewReader("id: 1\nevent: a\ndata: {}\n\nid: 2\nevent: b\n"))
	if ev, err := r.Next(); err != nil || ev.ID != "1" {
		t.Fatalf("%+v %v", ev, err)
	}
	if _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v", err)
	}
	if _, err := NewReader(strings.NewReader("")).Next(); err != io.EOF {
		t.Fatalf("empty stream: %v", err)
	}
}
