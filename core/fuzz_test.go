package core

import (
	"encoding/json"
	"strings"
	"testing"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/; `go test` runs them
// as regular tests and `go test -fuzz=FuzzName` explores from them.

func FuzzNormalizeMessages(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":"hi"}]`))
	f.Add([]byte(`[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"a/b","arguments":"{}"}}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := NormalizeMessagesJSON(data)
		if err != nil {
			return
		}
		raw := make([]any, len(msgs))
		for i, m := range msgs {
			if _, ok := roleAliases[m.Role]; !ok || roleAliases[m.Role] != m.Role {
				t.Fatalf("non-canonical role %q", m.Role)
			}
			if (m.Role == RoleToolCall || m.Role == RoleToolResult) && m.ToolCallID() == "" {
				t.Fatalf("tool message without id: %+v", m)
			}
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var g any
			if err := decodeJSON(b, &g); err != nil {
				t.Fatal(err)
			}
			raw[i] = g
		}
		again, err := NormalizeMessages(raw)
		if err != nil {
			t.Fatalf("normalized messages do not normalize again: %v", err)
		}
		if mustCanon(t, again) != mustCanon(t, msgs) {
			t.Fatalf("normalization is not idempotent")
		}
	})
}

func FuzzNormalizeToolDeclaration(f *testing.F) {
	f.Add([]byte(`{"name":"client/a","description":"d","parameters":{"type":"object"}}`))
	f.Add([]byte(`{"name":"ability/x","source":"s","description":"d","runtime":{"token":"t"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw any
		if err := decodeJSON(data, &raw); err != nil {
			return
		}
		acc, rej := NormalizeRequestTools([]any{raw})
		if len(acc)+len(rej) != 1 {
			t.Fatalf("one declaration gave %d accepted and %d rejected", len(acc), len(rej))
		}
		for _, d := range acc {
			b, err := d.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var g any
			if err := decodeJSON(b, &g); err != nil {
				t.Fatal(err)
			}
			again, err := NormalizeServerTool(g)
			if err != nil {
				t.Fatalf("accepted declaration does not normalize again: %v\n%s", err, b)
			}
			if mustCanon(t, again) != mustCanon(t, d) {
				t.Fatalf("declaration normalization is not idempotent:\n%s\n%s", mustCanon(t, again), mustCanon(t, d))
			}
			if strings.Contains(mustCanon(t, d.Runtime), `"token":"`) && !strings.Contains(mustCanon(t, d.Runtime), RedactedValue) {
				t.Fatalf("sensitive runtime key kept: %v", d.Runtime)
			}
		}
		_, _ = NormalizeClientTool(raw)
	})
}

// fuzzTranscript builds a well-formed transcript from bytes: each byte
// picks the next message kind and its length.
func fuzzTranscript(data []byte) []Message {
	var msgs []Message
	if len(data) > 0 && data[0]%3 == 0 {
		msgs = append(msgs, Message{Role: RoleSystem, Content: strings.Repeat("s", int(data[0]))})
	}
	id := 0
	for i, b := range data {
		size := int(b) % 97
		switch b % 4 {
		case 0:
			msgs = append(msgs, Message{Role: RoleUser, Content: strings.Repeat("u", size)})
		case 1:
			msgs = append(msgs, Message{Role: RoleAssistant, Content: strings.Repeat("a", size)})
		default:
			n := 1 + i%3
			var ids []string
			for k := 0; k < n; k++ {
				id++
				cid := "c" + string(rune('a'+id%26)) + strings.Repeat("x", id/26)
				ids = append(ids, cid)
				msgs = append(msgs, toolCallMessage(cid, "a/b", map[string]any{"q": strings.Repeat("q", size)}))
			}
			for _, cid := range ids {
				msgs = append(msgs, Message{Role: RoleToolResult, Content: strings.Repeat("r", size), Metadata: map[string]any{"tool_call_id": cid}})
			}
		}
	}
	return msgs
}

func FuzzTrimToContextWindow(f *testing.F) {
	f.Add([]byte{3, 10, 200, 7, 9, 42}, 120)
	f.Add([]byte{0, 1, 2, 3}, 1)
	f.Fuzz(func(t *testing.T, data []byte, budget int) {
		if len(data) > 200 {
			data = data[:200]
		}
		msgs := fuzzTranscript(data)
		out, trim := TrimToContextWindow(msgs, budget, 0)
		nsys, inSys := 0, 0
		for _, m := range msgs {
			if m.Role == RoleSystem {
				inSys++
			}
		}
		open := map[string]bool{}
		for _, m := range out {
			switch m.Role {
			case RoleSystem:
				nsys++
			case RoleToolCall:
				open[m.ToolCallID()] = true
			case RoleToolResult:
				if !open[m.ToolCallID()] {
					t.Fatalf("result %s kept without its call", m.ToolCallID())
				}
			}
		}
		if nsys != inSys {
			t.Fatalf("system messages dropped: %d of %d kept", nsys, inSys)
		}
		if trim == nil {
			if len(out) != len(msgs) {
				t.Fatal("untrimmed output changed length")
			}
			return
		}
		if len(out)-nsys-1 < 2 {
			t.Fatalf("fewer than two non-system messages kept: %d", len(out)-nsys-1)
		}
		if len(trim.Dropped)+len(out)-1 != len(msgs) {
			t.Fatalf("dropped %d + kept %d != %d", len(trim.Dropped), len(out)-1, len(msgs))
		}
	})
}
