package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

func build(t *testing.T, cfg string) core.Guardrails {
	t.Helper()
	var c Config
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		t.Fatal(err)
	}
	g, err := Build(&c, Deps{Agent: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func out(g core.Guardrails, content string) core.GuardrailResult {
	return g.Output(context.Background(), core.Message{Role: core.RoleAssistant, Content: content})
}

func replacement(r core.GuardrailResult) string {
	if r.Replacement == nil {
		return "<none>"
	}
	return *r.Replacement
}

func TestRegex(t *testing.T) {
	g := build(t, `{"output":[{"type":"regex","pattern":"(?i)secret-[0-9]+"}],
		"input":[{"type":"regex","pattern":"token=\\w+","action":"redact","mask":"token=***"}],
		"tool":[{"type":"regex","pattern":"rm -rf"}]}`)
	if r := out(g, "the SECRET-42 is here"); r.Allowed || !strings.Contains(r.Reason, "the reply matches the pattern") {
		t.Errorf("deny: %+v", r)
	}
	if r := out(g, "nothing to see"); !r.Allowed || r.Replacement != nil {
		t.Errorf("allow: %+v", r)
	}
	msgs := []core.Message{{Role: core.RoleUser, Content: "old token=abc"}, {Role: core.RoleAssistant, Content: "token=zzz"}, {Role: core.RoleUser, Content: "new token=def and token=ghi"}}
	r := g.Input(context.Background(), msgs)
	if !r.Allowed || len(r.Redactions) != 2 || r.Redactions[0] != "old token=***" || r.Redactions[2] != "new token=*** and token=***" {
		t.Errorf("input redaction: %+v", r)
	}
	if msgs[0].Content != "old token=abc" {
		t.Errorf("the hook changed its argument")
	}
	if r := g.Tool(context.Background(), "ability/sh", map[string]any{"cmd": []any{"ls", "rm -rf /"}}); r.Allowed || !strings.Contains(r.Reason, "argument /cmd/1 of ability/sh") {
		t.Errorf("tool deny: %+v", r)
	}
	if r := g.Tool(context.Background(), "ability/sh", map[string]any{"cmd": "ls"}); !r.Allowed {
		t.Errorf("tool allow: %+v", r)
	}
}

func TestPII(t *testing.T) {
	g := build(t, `{"output":[{"type":"pii","entities":["email","phone","card_number"],"action":"redact"}]}`)
	cases := []struct{ in, want string }{
		{"mail ada@example.com now", "mail [REDACTED] now"},
		{"card 4111 1111 1111 1111.", "card [REDACTED]."},
		{"card 4111-1111-1111-1111", "card [REDACTED]"},
		{"amex 378282246310005", "amex [REDACTED]"},
		{"call +1 (555) 123-4567 today", "call [REDACTED] today"},
		{"call 555-123-4567", "call [REDACTED]"},
		{"call +44 20 7946 0958", "call [REDACTED]"},
		// Not PII: random digit runs that fail Luhn, dates, short numbers, ids.
		{"order 4111 1111 1111 1112", "order 4111 1111 1111 1112"},
		{"id 1234567890123456789012345", "id 1234567890123456789012345"},
		{"on 2026-01-02 10:30 we met 3 people", "on 2026-01-02 10:30 we met 3 people"},
		{"version 1.2.3 costs 12.50", "version 1.2.3 costs 12.50"},
		{"user@localhost", "user@localhost"},
	}
	for _, c := range cases {
		r := out(g, c.in)
		got := c.in
		if r.Replacement != nil {
			got = *r.Replacement
		}
		if !r.Allowed || got != c.want {
			t.Errorf("%q: got %q (allowed %v), want %q", c.in, got, r.Allowed, c.want)
		}
	}
	deny := build(t, `{"input":[{"type":"pii","entities":["card_number"]}]}`)
	r := deny.Input(context.Background(), []core.Message{{Role: core.RoleUser, Content: "my card is 5555555555554444"}})
	if r.Allowed || r.Reason != "a user message contains card number" {
		t.Errorf("deny: %+v", r)
	}
	r = deny.Input(context.Background(), []core.Message{{Role: core.RoleUser, Content: "my order is 5555555555554445"}})
	if !r.Allowed {
		t.Errorf("a Luhn-invalid number denied: %+v", r)
	}
}

func TestLuhn(t *testing.T) {
	for _, s := range []string{"4111111111111111", "5555555555554444", "378282246310005", "6011111111111117", "79927398713"} {
		if !Luhn(s) {
			t.Errorf("Luhn(%s) = false", s)
		}
	}
	for _, s := range []string{"4111111111111112", "1234567812345678", "79927398710", "", "12a4"} {
		if Luhn(s) {
			t.Errorf("Luhn(%s) = true", s)
		}
	}
}

func TestMaxLength(t *testing.T) {
	g := build(t, `{"output":[{"type":"max_length","chars":5}],"input":[{"type":"max_length","chars":5}],"tool":[{"type":"max_length","chars":12}]}`)
	if r := out(g, "héllo"); !r.Allowed {
		t.Errorf("5 characters denied: %+v", r)
	}
	if r := out(g, "hello!"); r.Allowed || r.Reason != "the reply is 6 characters long, over the limit of 5" {
		t.Errorf("6 characters: %+v", r)
	}
	// Only user messages count at the input stage.
	if r := g.Input(context.Background(), []core.Message{{Role: core.RoleUser, Content: "hi"}, {Role: core.RoleToolResult, Content: "a long tool result"}}); !r.Allowed {
		t.Errorf("input: %+v", r)
	}
	if r := g.Tool(context.Background(), "t", map[string]any{"q": "abcdef"}); r.Allowed {
		t.Errorf(`{"q":"abcdef"} is 14 characters: %+v`, r)
	}
}

func TestJSONSchema(t *testing.T) {
	g := build(t, `{"tool":[{"type":"json_schema","tools":["ability/transfer"],"schema":{"type":"object","required":["amount"],"properties":{"amount":{"type":"number","maximum":100}}}}]}`)
	ctx := context.Background()
	if r := g.Tool(ctx, "ability/transfer", map[string]any{"amount": json.Number("50")}); !r.Allowed {
		t.Errorf("valid: %+v", r)
	}
	if r := g.Tool(ctx, "ability/transfer", map[string]any{"amount": json.Number("500")}); r.Allowed || !strings.Contains(r.Reason, "do not match the guardrail schema: at /amount") {
		t.Errorf("over maximum: %+v", r)
	}
	if r := g.Tool(ctx, "ability/transfer", map[string]any{}); r.Allowed || r.Reason != "arguments of ability/transfer are missing amount" {
		t.Errorf("missing: %+v", r)
	}
	if r := g.Tool(ctx, "ability/other", map[string]any{}); !r.Allowed {
		t.Errorf("another tool: %+v", r)
	}
}

func TestChainingAndFirstDeny(t *testing.T) {
	g := build(t, `{"output":[
		{"type":"regex","pattern":"alpha","action":"redact","mask":"beta"},
		{"type":"regex","pattern":"beta","action":"redact","mask":"g"},
		{"type":"max_length","chars":20}]}`)
	if r := out(g, "alpha!"); !r.Allowed || replacement(r) != "g!" {
		t.Errorf("chained: %+v %q", r, replacement(r))
	}
	// The last rule sees the redacted text (7 characters), not the
	// original (23).
	if r := out(g, "alpha alpha alpha alpha"); !r.Allowed || replacement(r) != "g g g g" {
		t.Errorf("max_length saw the original: %+v", r)
	}
	first := build(t, `{"output":[{"type":"regex","pattern":"x","action":"redact"},{"type":"regex","pattern":"y"},{"type":"max_length","chars":1}]}`)
	if r := out(first, "xy"); r.Allowed || !strings.Contains(r.Reason, "pattern y") || r.Replacement != nil {
		t.Errorf("first deny: %+v", r)
	}
}

type failing struct{ err error }

func (f failing) Check(context.Context, Subject) (Verdict, error) {
	if f.err == nil {
		panic("boom")
	}
	return Verdict{}, f.err
}

func TestOnError(t *testing.T) {
	Register("test_failing", func(raw json.RawMessage, d Deps) (Rule, error) {
		var c struct {
			Type  string `json:"type"`
			Panic bool   `json:"panic"`
		}
		if err := DecodeStrict(raw, &c); err != nil {
			return nil, err
		}
		if c.Panic {
			return failing{}, nil
		}
		return failing{err: errors.New("service unavailable")}, nil
	})
	deny := build(t, `{"output":[{"type":"test_failing"}]}`)
	if r := out(deny, "hi"); r.Allowed || r.Reason != "guardrail error: service unavailable" {
		t.Errorf("on_error deny: %+v", r)
	}
	panics := build(t, `{"output":[{"type":"test_failing","panic":true}]}`)
	if r := out(panics, "hi"); r.Allowed || r.Reason != "guardrail error: rule panicked: boom" {
		t.Errorf("panic: %+v", r)
	}
	allow := build(t, `{"on_error":"allow","output":[{"type":"test_failing"},{"type":"regex","pattern":"hi","action":"redact"}]}`)
	if r := out(allow, "hi"); !r.Allowed || replacement(r) != "[REDACTED]" {
		t.Errorf("on_error allow: %+v", r)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := map[string]string{
		`{"input":[{"type":"regex","pattern":"("}]}`:                               "guardrails.input[0] (regex): pattern: error parsing regexp",
		`{"input":[{"type":"regex","pattern":"a*"}]}`:                              "guardrails.input[0] (regex): pattern: \"a*\" matches the empty string",
		`{"input":[{"type":"regex"}]}`:                                             "guardrails.input[0] (regex): pattern is required",
		`{"output":[{"type":"regex","pattern":"a","action":"block"}]}`:             "guardrails.output[0] (regex): action: want \"deny\" or \"redact\"",
		`{"tool":[{"type":"regex","pattern":"a","action":"redact"}]}`:              "guardrails.tool[0] (regex): action: redact applies to the input and output stages only",
		`{"input":[{"type":"pii","entities":["email","ssn"]}]}`:                    "guardrails.input[0] (pii): entities[1]: unknown entity \"ssn\"",
		`{"input":[{"type":"pii"}]}`:                                               "guardrails.input[0] (pii): entities: want at least one",
		`{"output":[{"type":"max_length","chars":0}]}`:                             "guardrails.output[0] (max_length): chars: want a positive number",
		`{"output":[{"type":"max_length","chars":-3}]}`:                            "guardrails.output[0] (max_length): chars: want a positive number",
		`{"input":[{"type":"json_schema","schema":{"type":"object"}}]}`:            "guardrails.input[0] (json_schema): json_schema checks tool arguments: it belongs in guardrails.tool",
		`{"tool":[{"type":"json_schema"}]}`:                                        "guardrails.tool[0] (json_schema): schema is required",
		`{"tool":[{"type":"json_schema","schema":{"type":"nope"}}]}`:               "guardrails.tool[0] (json_schema): schema:",
		`{"tool":[{"type":"max_length","chars":3},{"type":"shout"}]}`:              "guardrails.tool[1]: type: unknown type \"shout\"",
		`{"tool":[{"type":"bedrock","guardrail_id":"x"}]}`:                         "guardrails.tool[0] (bedrock): ",
		`{"tool":[{"type":"bedrock","guardrail_id":"x","guardrail_version":"1"}]}`: "guardrails.tool[0] (bedrock): this process runs steps but does not link Amazon Bedrock Guardrails",
		`{"output":[{"pattern":"a"}]}`:                                             "guardrails.output[0]: type is required",
		`{"output":[{"type":"regex","pattern":"a","extra":1}]}`:                    "guardrails.output[0] (regex): json: unknown field \"extra\"",
		`{"on_error":"ignore","output":[{"type":"regex","pattern":"a"}]}`:          "guardrails.on_error: want \"deny\" or \"allow\", got \"ignore\"",
		`{"output":["regex"]}`:                                                     "guardrails.output[0]: want a rule object",
	}
	for cfg, want := range cases {
		var c Config
		if err := json.Unmarshal([]byte(cfg), &c); err != nil {
			t.Fatal(err)
		}
		_, err := Build(&c, Deps{})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want %q…", cfg, err, want)
		}
	}
}

func TestNilConfig(t *testing.T) {
	g, err := Build(nil, Deps{})
	if err != nil || g.Input != nil || g.Output != nil || g.Tool != nil {
		t.Errorf("nil config: %+v %v", g, err)
	}
}
