package baton

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"
)

type flatParams struct {
	City    string  `json:"city"`
	Days    int     `json:"days,omitempty"`
	Small   int8    `json:"small"`
	Count   uint16  `json:"count"`
	Ratio   float64 `json:"ratio"`
	F32     float32 `json:"f32"`
	Metric  bool
	I32     int32  `json:"i32"`
	I64     int64  `json:"i64"`
	U       uint   `json:"u"`
	U8      uint8  `json:"u8"`
	U32     uint32 `json:"u32"`
	U64     uint64 `json:"u64"`
	I16     int16  `json:"i16"`
	Skipped string `json:"-"`
	Dash    string `json:"-,"`
	hidden  string
}

type nestedParams struct {
	City string         `json:"city"`
	When time.Time      `json:"when"`
	Tags []string       `json:"tags"`
	More map[string]any `json:"more"`
}

type quotedParams struct {
	N int `json:"n,string"`
}

// TestTypedDecodesAsEncodingJSON: whether a struct is filled directly or
// through encoding/json, the handler gets what encoding/json decodes, and
// a call encoding/json refuses fails with its error.
func TestTypedDecodesAsEncodingJSON(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	flat := []map[string]any{
		{"city": "Lisbon", "days": n("3"), "small": n("-5"), "count": n("7"), "ratio": n("0.25"), "f32": n("1.5"), "Metric": true, "-": "dash",
			"i32": n("-70000"), "i64": n("-9000000000"), "u": n("42"), "u8": n("255"), "u32": n("4000000000"), "u64": n("18000000000000000000"), "i16": n("-300")},
		{"city": nil, "days": n("2")},
		{},
		{"CITY": "case-insensitive match"},
		{"city": "x", "unknown": "ignored"},
		{"days": n("1.5")},
		{"days": n("1e2")},
		{"small": n("300")},
		{"count": n("-1")},
		{"city": n("5")},
		{"Metric": "yes"},
		{"days": 3},
		{"ratio": 0.5},
		{"f32": n("1e60")},
		{"u8": n("256")},
		{"Skipped": "not set", "hidden": "not set"},
	}
	for _, params := range flat {
		compareTyped[flatParams](t, params)
	}
	for i, direct := range []bool{true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false} {
		if got := flatStructOf[flatParams]().fill(unsafe.Pointer(new(flatParams)), flat[i]); got != direct {
			t.Errorf("parameters %v: filled directly %v, want %v", flat[i], got, direct)
		}
	}
	compareTyped[nestedParams](t, map[string]any{"city": "Porto", "when": "2026-01-02T03:04:05Z", "tags": []any{"a"}, "more": map[string]any{"k": n("1")}})
	compareTyped[quotedParams](t, map[string]any{"n": "12"})
	compareTyped[map[string]any](t, map[string]any{"a": n("1")})
	if flatStructOf[flatParams]() == nil || flatStructOf[nestedParams]() != nil || flatStructOf[quotedParams]() != nil || flatStructOf[map[string]any]() != nil {
		t.Fatal("the direct path is taken for the wrong types")
	}
}

// compareTyped runs a Typed handler on params and checks it got what
// encoding/json decodes from their JSON (or failed as it does).
func compareTyped[P any](t *testing.T, params map[string]any) {
	t.Helper()
	b, _ := json.Marshal(params)
	var want P
	wantErr := json.Unmarshal(b, &want)
	var got P
	h := Typed(func(_ context.Context, p P, _ ToolCall) (string, error) { got = p; return "ok", nil })
	_, err := h(context.Background(), ToolCall{ToolName: "t/x", Parameters: params})
	switch {
	case (err == nil) != (wantErr == nil):
		t.Errorf("%T %s: error %v, encoding/json %v", got, b, err, wantErr)
	case err != nil && !strings.Contains(err.Error(), wantErr.Error()):
		t.Errorf("%T %s: error %v, want %v", got, b, err, wantErr)
	case err == nil && fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want):
		t.Errorf("%T %s: decoded %#v, encoding/json %#v", got, b, got, want)
	}
}
