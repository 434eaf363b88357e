package core

import (
	"errors"
	"strings"
	"testing"
)

func TestMemoryCursorRoundTrip(t *testing.T) {
	for _, id := range []string{"m", "mem_01J9Z3", "a b/é#%", strings.Repeat("x", MaxMemoryID)} {
		got, err := DecodeMemoryCursor(EncodeMemoryCursor(id))
		if err != nil || got != id {
			t.Fatalf("cursor of %q: %q, %v", id, got, err)
		}
	}
	for _, bad := range []string{"", "!!", "bQ==", EncodeMemoryCursor("a\tb"), EncodeMemoryCursor("\xff"), EncodeMemoryCursor(strings.Repeat("x", MaxMemoryID+1))} {
		if _, err := DecodeMemoryCursor(bad); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("cursor %q: %v, want invalid input", bad, err)
		}
	}
}

func TestMemoryWriteValidate(t *testing.T) {
	scope := MemoryScope{Tenant: "acme", Subject: "alice"}
	m := func(id string) Memory { return Memory{ID: id, Subject: "alice", Text: "x"} }
	if err := (MemoryWrite{Scope: scope, Put: []Memory{m("a"), m("b")}, Delete: []string{"c"}, Once: "extract:r"}).Validate(); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]MemoryWrite{
		"put twice":      {Scope: scope, Put: []Memory{m("a"), m("a")}},
		"put and delete": {Scope: scope, Put: []Memory{m("a")}, Delete: []string{"a"}},
		"delete twice":   {Scope: scope, Delete: []string{"a", "a"}},
		"empty delete":   {Scope: scope, Delete: []string{""}},
		"control once":   {Scope: scope, Once: "a\nb"},
		"long once":      {Scope: scope, Once: strings.Repeat("o", MaxMemoryOnce+1)},
		"long id":        {Scope: scope, Put: []Memory{m(strings.Repeat("i", MaxMemoryID+1))}},
	} {
		if err := w.Validate(); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func TestMemoryPage(t *testing.T) {
	for _, tc := range []struct {
		cursor    string
		limit     int
		after     string
		n         int
		wantError bool
	}{
		{"", 0, "", MemoryPageSize, false},
		{"", 50, "", 50, false},
		{"", MemoryPageSize + 1, "", MemoryPageSize, false},
		{EncodeMemoryCursor("m_7"), 3, "m_7", 3, false},
		{"", -1, "", 0, true},
		{"%%", 3, "", 0, true},
	} {
		after, n, err := MemoryPage(tc.cursor, tc.limit)
		if after != tc.after || n != tc.n || (err != nil) != tc.wantError || err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("MemoryPage(%q, %d) = %q, %d, %v", tc.cursor, tc.limit, after, n, err)
		}
	}
}
