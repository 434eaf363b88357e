package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// viewRecorder wraps a model and records what each turn saw in the
// reply's request_metadata, so golden envelopes show the model's view.
type viewRecorder struct{ inner ModelProvider }

func (v viewRecorder) Complete(ctx context.Context, req ModelRequest) (ModelReply, error) {
	reply, err := v.inner.Complete(ctx, req)
	if err != nil {
		return reply, err
	}
	view := make([]any, len(req.Messages))
	for i, m := range req.Messages {
		view[i] = fmt.Sprintf("%s:%s", m.Role, truncateRunes(m.Content+m.ToolCallID(), 40))
	}
	tools := make([]any, len(req.Tools))
	for i, t := range req.Tools {
		tools[i] = t.Name
	}
	reply.RequestMetadata = map[string]any{"view": view, "tools": tools, "view_chars": EstimateChars(req.Messages)}
	return reply, nil
}

func recordView(m ModelProvider) ModelProvider { return viewRecorder{m} }

// denyPasswords is an output guardrail that denies answers mentioning a
// password.
func denyPasswords(_ context.Context, msg Message) GuardrailResult {
	if strings.Contains(msg.Content, "password") {
		return Deny("credential in the answer")
	}
	return Allow()
}

func TestExtensionScenarios(t *testing.T) {
	mk := func(name string, extra map[string]any) ToolDeclaration { return serverTool(name, extra) }
	read := mk("ability/read", map[string]any{"categories": []any{"read"}})
	write := mk("ability/write", map[string]any{"categories": []any{"write"}})
	audit := mk("ability/audit_log", map[string]any{"categories": []any{"ops"}})
	chatOnly := mk("ability/chat_only", map[string]any{"modes": []any{"pipeline"}})
	rtTool := mk("ability/runtime_helper", map[string]any{"runtime": map[string]any{"runtime_tool": true}, "categories": []any{"helpers"}})
	handlers := map[string]func(ToolCall) (any, error){}
	for _, n := range []string{"ability/read", "ability/write", "ability/audit_log", "ability/runtime_helper", "ability/search", "ability/t_global", "ability/slow", "ability/boom"} {
		handlers[n] = echo
	}
	handlers["ability/boom"] = func(ToolCall) (any, error) { return nil, errors.New("disk full") }
	handlers["ability/slow"] = func(c ToolCall) (any, error) { time.Sleep(5 * time.Millisecond); return echo(c) }
	handlers["ability/whoami"] = func(c ToolCall) (any, error) {
		return map[string]any{"principal": c.Principal.SafeMetadata(), "tenant": c.Principal.Tenant}, nil
	}
	cfg := func(tools []ToolDeclaration, turns ...ScriptedTurn) RunConfig {
		return RunConfig{Agent: "demo", Model: scripted(turns...), Tools: tools}
	}
	search := serverTool("ability/search", nil)
	// compacting is a run under policy that searches once per query, then
	// replies last; opts are its scripted model's options.
	compacting := func(policy CompactionPolicy, opts map[string]any, last string, queries ...string) RunConfig {
		var turns []ScriptedTurn
		for i, q := range queries {
			turns = append(turns, turn("", call(fmt.Sprintf("call_%d", i+1), "ability/search", map[string]any{"q": q})))
		}
		c := cfg([]ToolDeclaration{search}, append(turns, turn(last))...)
		c.Model.Options = opts
		c.Compaction = &policy
		return c
	}
	summaryUsage := map[string]any{"prompt_tokens": json.Number("40"), "completion_tokens": json.Number("8")}

	precedenceTools := []ToolDeclaration{
		mk("ability/t_deny", map[string]any{"action_policy": "direct"}),
		mk("ability/t_agent", map[string]any{"action_policy": "direct", "categories": []any{"danger"}}),
		mk("ability/t_category", map[string]any{"action_policy": "direct", "categories": []any{"danger"}}),
		mk("ability/t_provider", map[string]any{"action_policy": "direct"}),
		mk("ability/t_default", map[string]any{"action_policy": "forbidden", "action_policy_chat": "direct"}),
		mk("ability/t_mode", map[string]any{"action_policy_chat": "forbidden"}),
		mk("ability/t_global", nil),
	}
	var precedenceCalls []ToolCallRequest
	for i, d := range precedenceTools {
		precedenceCalls = append(precedenceCalls, call(fmt.Sprintf("call_%d", i+1), d.Name, map[string]any{"q": "x"}))
	}

	scenarios := []scenario{
		{name: "tool_visibility_policy", handlers: handlers, model: recordView, wantStatus: StatusCompleted,
			hooks: func(m *Machine) {
				m.ToolPolicyProviders = []ToolPolicyProvider{func(context.Context, PolicyContext) PolicyFragment {
					return PolicyFragment{MandatoryTools: []string{"ability/audit_log", "ability/write"}}
				}}
			},
			requestTools: []any{clientTool("client/get_calendar")},
			cfg: func() RunConfig {
				c := cfg([]ToolDeclaration{read, write, audit, chatOnly, rtTool, search},
					turn("", call("call_1", "ability/write", map[string]any{"q": "x"}), call("call_2", "ability/search", map[string]any{"q": "y"}), call("call_3", "ability/audit_log", map[string]any{"q": "z"})),
					turn("done"))
				c.Policy = PolicyConfig{ToolPolicy: &ToolPolicy{Mode: "allow", Categories: []string{"read"}}, Deny: []string{"ability/write"}, RuntimeCategories: []string{"helpers"}}
				return c
			}()},
		{name: "action_policy_precedence", handlers: handlers, wantStatus: StatusCompleted,
			hooks: func(m *Machine) {
				m.ActionPolicyProviders = []ActionPolicyProvider{func(_ context.Context, _ PolicyContext, d ToolDeclaration) string {
					switch d.Name {
					case "ability/t_provider":
						return ActionForbidden
					case "ability/t_category", "ability/t_default", "ability/t_mode":
						return "" // no opinion
					}
					return ""
				}}
			},
			cfg: func() RunConfig {
				c := cfg(precedenceTools, turn("", precedenceCalls...), turn("Only the global default ran."))
				c.Policy = PolicyConfig{Deny: []string{"ability/t_deny"}, ActionPolicy: &ActionPolicyConfig{
					Tools: map[string]string{"ability/t_agent": "forbidden", "ability/t_deny": "direct"}, Categories: map[string]string{"danger": "forbidden"}}}
				return c
			}()},
		{name: "compaction_completed", handlers: handlers, model: recordView, wantStatus: StatusCompleted,
			io: func(io *IO) {
				io.Summarizer = SummarizerFunc(func(_ context.Context, r SummaryRequest) (string, error) {
					return fmt.Sprintf("%d earlier messages about searches", len(r.Messages)), nil
				})
			},
			messages: []Message{{Role: RoleSystem, Content: "House rules."}, {Role: RoleUser, Content: "Search three things."}},
			cfg:      compacting(CompactionPolicy{Enabled: true, MaxMessages: 4, RecentMessages: 2}, nil, "All three searched.", "a", "b", "c")},
		{name: "compaction_failed_keeps_transcript", handlers: handlers, model: recordView, wantStatus: StatusCompleted,
			io: func(io *IO) {
				io.Summarizer = SummarizerFunc(func(context.Context, SummaryRequest) (string, error) {
					return "", errors.New("summarizer quota exceeded")
				})
			},
			cfg: compacting(CompactionPolicy{Enabled: true, MaxMessages: 2, RecentMessages: 1}, nil, "Done.", "a", "b")},
		// No summarizer: the compaction model (a cheaper one, with its own
		// prompt) writes the summary without consuming a scripted turn;
		// its usage is in the totals and in usage.compaction.
		{name: "compaction_model_summary", handlers: handlers, model: recordView, wantStatus: StatusCompleted,
			messages: []Message{{Role: RoleSystem, Content: "House rules."}, {Role: RoleUser, Content: "Search three things."}},
			cfg: compacting(CompactionPolicy{Enabled: true, MaxMessages: 4, RecentMessages: 2, Prompt: "Summarize tersely.",
				Model: &ModelSpec{Provider: ProviderScripted, Model: "summarizer-1", Options: map[string]any{ScriptedSummaryUsage: summaryUsage}}},
				nil, "All three searched.", "a", "b", "c")},
		// The run's own model writes the summary and fails: the transcript
		// stays whole and the turn goes on with the full view.
		{name: "compaction_model_failed", handlers: handlers, model: recordView, wantStatus: StatusCompleted,
			cfg: compacting(CompactionPolicy{Enabled: true, MaxMessages: 3, RecentMessages: 1},
				map[string]any{ScriptedSummaryError: "summary model overloaded"}, "Done.", "a", "b")},
		// The summary's tokens trip the total_tokens budget before the
		// next turn.
		{name: "compaction_summary_trips_budget", handlers: handlers, wantStatus: StatusBudgetExceeded,
			cfg: func() RunConfig {
				c := compacting(CompactionPolicy{Enabled: true, MaxMessages: 4, RecentMessages: 2},
					map[string]any{ScriptedSummaryUsage: summaryUsage}, "unreachable", "a", "b")
				c.Budgets = map[string]int{BudgetTotalTokens: 60}
				return c
			}()},
		{name: "context_trimming", handlers: handlers, model: recordView, wantStatus: StatusCompleted,
			messages: []Message{{Role: RoleSystem, Content: "Never drop me."}, {Role: RoleUser, Content: strings.Repeat("long question ", 20)}},
			cfg: func() RunConfig {
				c := cfg([]ToolDeclaration{search},
					turn("Searching first.", call("call_1", "ability/search", map[string]any{"q": strings.Repeat("a", 60)})),
					turn("", call("call_2", "ability/search", map[string]any{"q": "b"})),
					turn("Done."))
				c.System = "Be brief."
				c.ContextBudget = 260
				return c
			}()},
		{name: "guardrail_input_denied", handlers: handlers, wantStatus: StatusFailed,
			hooks: func(m *Machine) {
				m.Guardrails.Input = func(_ context.Context, msgs []Message) GuardrailResult {
					for _, msg := range msgs {
						if strings.Contains(msg.Content, "ssn") {
							return Deny("personal data in the prompt")
						}
					}
					return Allow()
				}
			},
			messages: user("my ssn is 123"), cfg: cfg(nil, turn("unreachable"))},
		{name: "guardrail_output_denied", handlers: handlers, wantStatus: StatusFailed,
			hooks: func(m *Machine) {
				m.Guardrails.Output = denyPasswords
			},
			cfg: cfg([]ToolDeclaration{search}, turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("The password is hunter2."))},
		{name: "guardrail_output_denied_over_budget", handlers: handlers, wantStatus: StatusFailed,
			hooks: func(m *Machine) { m.Guardrails.Output = denyPasswords },
			cfg: func() RunConfig {
				c := cfg([]ToolDeclaration{search}, turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("The password is hunter2."))
				c.Budgets = map[string]int{BudgetTotalTokens: 25}
				return c
			}()},
		{name: "guardrail_tool_denied", handlers: handlers, wantStatus: StatusCompleted,
			hooks: func(m *Machine) {
				m.Guardrails.Tool = func(_ context.Context, name string, args map[string]any) GuardrailResult {
					if args["q"] == "rm -rf" {
						return Deny("destructive query")
					}
					return Allow()
				}
			},
			cfg: cfg([]ToolDeclaration{search}, turn("", call("call_1", "ability/search", map[string]any{"q": "rm -rf"}), call("call_2", "ability/search", map[string]any{"q": "ls"})), turn("One was denied."))},
		{name: "guardrail_output_redacted", handlers: handlers, wantStatus: StatusCompleted,
			hooks: func(m *Machine) {
				m.Guardrails.Output = func(_ context.Context, msg Message) GuardrailResult {
					if strings.Contains(msg.Content, "ada@example.com") {
						return RedactOutput(strings.ReplaceAll(msg.Content, "ada@example.com", "[REDACTED]"))
					}
					return Allow()
				}
			},
			cfg: cfg([]ToolDeclaration{search}, turn("Looking.", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("Write to ada@example.com."))},
		{name: "guardrail_input_redacted", handlers: handlers, wantStatus: StatusCompleted, model: recordView,
			hooks: func(m *Machine) {
				m.Guardrails.Input = func(_ context.Context, msgs []Message) GuardrailResult {
					res := Allow()
					for i, msg := range msgs {
						if msg.Role == RoleUser && strings.Contains(msg.Content, "123-45-6789") {
							if res.Redactions == nil {
								res.Redactions = map[int]string{}
							}
							res.Redactions[i] = strings.ReplaceAll(msg.Content, "123-45-6789", "[REDACTED]")
						}
					}
					return res
				}
			},
			messages: user("my ssn is 123-45-6789"),
			cfg:      cfg([]ToolDeclaration{search}, turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("Noted."))},
		{name: "steering_drained_before_trimming", model: recordView, wantStatus: StatusCompleted,
			handlers: map[string]func(ToolCall) (any, error){"ability/search": func(c ToolCall) (any, error) {
				env.send(Steer{Content: "Actually, focus on error handling."})
				return echo(c)
			}},
			cfg: func() RunConfig {
				c := cfg([]ToolDeclaration{search}, turn("", call("call_1", "ability/search", map[string]any{"q": strings.Repeat("x", 80)})), turn("Focusing on error handling."))
				c.ContextBudget = 200
				return c
			}()},
		{name: "steering_while_paused", wantStatus: StatusCompleted, model: recordView, requestTools: []any{clientTool("client/get_calendar")},
			resumes: []func(RunState, *FixedClock) Input{
				func(RunState, *FixedClock) Input { return Steer{Content: "Also check Tuesday."} },
				submitFirst(true, "free", ""),
			},
			cfg: cfg(nil, turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"})), turn("Monday and Tuesday are free."))},
		{name: "cancel_top_of_iteration", wantStatus: StatusCancelled,
			handlers: map[string]func(ToolCall) (any, error){"ability/search": func(c ToolCall) (any, error) {
				env.send(Cancel{Reason: "user pressed stop"})
				return echo(c)
			}},
			cfg: cfg([]ToolDeclaration{search}, turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("unreachable"))},
		{name: "cancel_before_model_call", wantStatus: StatusCancelled, handlers: handlers,
			hooks: func(m *Machine) {
				m.Guardrails.Input = func(context.Context, []Message) GuardrailResult {
					env.send(Cancel{Reason: "deadline reached"})
					return Allow()
				}
			},
			cfg: cfg([]ToolDeclaration{search}, turn("unreachable"))},
		{name: "cancel_before_tool_execution", wantStatus: StatusCancelled,
			handlers: map[string]func(ToolCall) (any, error){"ability/search": func(c ToolCall) (any, error) {
				env.send(Cancel{Reason: "user pressed stop"})
				return echo(c)
			}},
			cfg: cfg([]ToolDeclaration{search}, turn("", call("call_1", "ability/search", map[string]any{"q": "a"}), call("call_2", "ability/search", map[string]any{"q": "b"}), call("call_3", "ability/search", map[string]any{"q": "c"})), turn("unreachable"))},
		{name: "cancel_while_paused", wantStatus: StatusCancelled, requestTools: []any{clientTool("client/get_calendar")},
			resumes: []func(RunState, *FixedClock) Input{func(RunState, *FixedClock) Input { return Cancel{Reason: "user left"} }},
			cfg:     cfg(nil, turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"}), call("call_2", "client/get_calendar", map[string]any{"day": "tuesday"})), turn("unreachable"))},
		{name: "interrupt_received", wantStatus: StatusInterrupted, requestTools: []any{clientTool("client/get_calendar")},
			resumes: []func(RunState, *FixedClock) Input{func(RunState, *FixedClock) Input {
				return Interrupt{Reason: "new user message", Metadata: map[string]any{"source": "slack"}}
			}},
			cfg: cfg(nil, turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"})), turn("unreachable"))},
		{name: "interrupt_with_action", wantStatus: StatusInterrupted, requestTools: []any{clientTool("client/get_calendar")},
			resumes: []func(RunState, *FixedClock) Input{func(RunState, *FixedClock) Input {
				return Interrupt{Action: "handoff", Metadata: map[string]any{"source": "cli", "action": "ignored", "reason": "ignored"}}
			}},
			cfg: cfg(nil, turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"})), turn("unreachable"))},
		{name: "parallel_three_calls_one_failing", wantStatus: StatusCompleted, handlers: handlers,
			cfg: func() RunConfig {
				c := cfg([]ToolDeclaration{mk("ability/slow", nil), mk("ability/boom", nil), search},
					turn("", call("call_1", "ability/slow", map[string]any{"q": "a"}), call("call_2", "ability/boom", map[string]any{"q": "b"}), call("call_3", "ability/search", map[string]any{"q": "c"})),
					turn("Two of three worked."))
				c.ParallelToolCalls = true
				return c
			}()},
		parallelPending("parallel_pending_resumed_in_order", []int{0, 1, 2}),
		parallelPending("parallel_pending_resumed_out_of_order", []int{2, 1, 0}),
		accessScenario("tool_access_scope_missing", []string{"runs:write"}),
		accessScenario("tool_access_scope_held", []string{"runs:write", "crm:write"}),
		{name: "execution_principal", wantStatus: StatusCompleted,
			handlers: map[string]func(ToolCall) (any, error){"ability/whoami": handlers["ability/whoami"]},
			hooks: func(m *Machine) {
				m.ToolAccess = func(_ context.Context, pc PolicyContext, d ToolDeclaration) bool {
					return pc.Principal.Allows("tools:" + strings.TrimPrefix(d.Name, "ability/"))
				}
			},
			cfg: func() RunConfig {
				c := cfg([]ToolDeclaration{mk("ability/whoami", nil), mk("ability/admin", nil)},
					turn("", call("call_1", "ability/whoami", nil), call("call_2", "ability/admin", nil)), turn("You are ann."))
				c.Principal = &Principal{ActorID: "ann", AgentID: "demo", AuthSource: "bearer_token", RequestContext: "rest", Tenant: "acme",
					Workspace: &Workspace{Type: "site", ID: "blog-1"}, TokenID: "tok_1", CapabilityCeiling: []string{"tools:whoami"},
					Caller:          &CallerContext{CallerHost: "self", ChainDepth: 0, ChainRoot: "req-1"},
					RequestMetadata: map[string]any{"ip": "127.0.0.1", "authorization": "Bearer abc"}}
				return c
			}()},
	}
	runScenarios(t, scenarios)
}

// parallelPending: two client requests and one approval pending at once,
// resolved in the given order; the transcript keeps the call order.
func parallelPending(name string, order []int) scenario {
	email := serverTool("ability/send_email", map[string]any{"action_policy": "preview"})
	c := RunConfig{Agent: "demo", Tools: []ToolDeclaration{email}, ParallelToolCalls: true, Model: scripted(
		turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"}), call("call_2", "client/get_calendar", map[string]any{"day": "tuesday"}), call("call_3", "ability/send_email", map[string]any{"to": "ann@example.com"})),
		turn("All three are in."))}
	var resumes []func(RunState, *FixedClock) Input
	for _, k := range order {
		k := k
		resumes = append(resumes, func(st RunState, _ *FixedClock) Input {
			c := st.Calls[k]
			if c.ActionID != "" {
				return ApprovalDecision{ActionID: c.ActionID, Decision: "accept"}
			}
			return ClientResult{RequestID: c.RequestID, Success: true, Result: "result of " + c.ID}
		})
	}
	return scenario{name: name, cfg: c, resumes: resumes, wantStatus: StatusCompleted, requestTools: []any{clientTool("client/get_calendar")},
		handlers: map[string]func(ToolCall) (any, error){"ability/send_email": echo}}
}

func TestParallelPendingOrderDoesNotMatter(t *testing.T) {
	// Events differ (their order records the order of decisions); the
	// transcript must not.
	ea, eb := runInProcess(t, parallelPending("a", []int{0, 1, 2})), runInProcess(t, parallelPending("b", []int{2, 1, 0}))
	if a, b := mustCanon(t, ea.Messages), mustCanon(t, eb.Messages); a != b {
		t.Fatalf("transcripts differ by resume order:\n%s\n%s", a, b)
	}
}

func TestResolveActionPolicyLevels(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	m.ActionPolicyProviders = []ActionPolicyProvider{func(_ context.Context, _ PolicyContext, d ToolDeclaration) string {
		if d.Name == "a/provider" {
			return ActionPreview
		}
		return ""
	}}
	p := PolicyConfig{Deny: []string{"a/deny"}, ActionPolicy: &ActionPolicyConfig{Tools: map[string]string{"a/agent": "preview"}, Categories: map[string]string{"cat": "forbidden"}}}
	tests := []struct {
		decl        ToolDeclaration
		want, level string
	}{
		{ToolDeclaration{Name: "a/deny", ActionPolicy: "direct"}, ActionForbidden, LevelRuntimeDeny},
		{ToolDeclaration{Name: "a/agent", ActionPolicy: "forbidden", Categories: []string{"cat"}}, ActionPreview, LevelAgentTool},
		{ToolDeclaration{Name: "a/cat", Categories: []string{"cat"}}, ActionForbidden, LevelAgentCategory},
		{ToolDeclaration{Name: "a/provider", ActionPolicy: "direct"}, ActionPreview, LevelProvider},
		{ToolDeclaration{Name: "a/default", ActionPolicy: "preview", Extensions: map[string]any{"action_policy_chat": "forbidden"}}, ActionPreview, LevelToolDefault},
		{ToolDeclaration{Name: "a/mode", Extensions: map[string]any{"action_policy_chat": "forbidden"}}, ActionForbidden, LevelToolMode},
		{ToolDeclaration{Name: "a/other_mode", Extensions: map[string]any{"action_policy_pipeline": "forbidden"}}, ActionDirect, LevelGlobal},
	}
	for _, tc := range tests {
		got, level := m.ResolveActionPolicy(context.Background(), PolicyContext{}, tc.decl, p)
		if got != tc.want || level != tc.level {
			t.Errorf("%s: got %s at %s, want %s at %s", tc.decl.Name, got, level, tc.want, tc.level)
		}
	}
	m.ActionPolicyFilter = func(_ context.Context, _ PolicyContext, d ToolDeclaration, cur string) string {
		if d.Name == "a/mode" {
			return ActionPreview
		}
		return cur
	}
	if got, level := m.ResolveActionPolicy(context.Background(), PolicyContext{}, ToolDeclaration{Name: "a/mode", Extensions: map[string]any{"action_policy_chat": "forbidden"}}, p); got != ActionPreview || level != LevelFilter {
		t.Errorf("filter: %s at %s", got, level)
	}
}

func TestTrimKeepsSystemAndToolPairs(t *testing.T) {
	msgs := []Message{
		{Role: RoleSystem, Content: "sys"},
		{Role: RoleUser, Content: strings.Repeat("u", 100)},
		{Role: RoleAssistant, Content: "calling"},
		toolCallMessage("c1", "a/b", map[string]any{"q": strings.Repeat("x", 50)}),
		toolCallMessage("c2", "a/b", map[string]any{"q": "y"}),
		{Role: RoleToolResult, Content: strings.Repeat("r", 80), Metadata: map[string]any{"tool_call_id": "c1"}},
		{Role: RoleToolResult, Content: "r2", Metadata: map[string]any{"tool_call_id": "c2"}},
		{Role: RoleAssistant, Content: "final"},
		{Role: RoleUser, Content: "next"},
	}
	for budget := 20; budget <= 600; budget += 7 {
		out, trim := TrimToContextWindow(msgs, budget, 0)
		if out[0].Role != RoleSystem {
			t.Fatalf("budget %d: system message dropped", budget)
		}
		nonSystem := 0
		for _, m := range out {
			if m.Role != RoleSystem {
				nonSystem++
			}
		}
		if id := resultWithoutCall(out); id != "" {
			t.Fatalf("budget %d: result %s kept without its call", budget, id)
		}
		if nonSystem < 2 {
			t.Fatalf("budget %d: only %d non-system messages kept", budget, nonSystem)
		}
		if trim == nil && EstimateChars(msgs) > budget {
			t.Fatalf("budget %d: over budget but not trimmed", budget)
		}
		if trim != nil && !strings.HasPrefix(out[trim.SummaryIndex].Content, "[Context summary: ") {
			t.Fatalf("budget %d: no summary at %d", budget, trim.SummaryIndex)
		}
	}
	got := SummarizeDropped(msgs[1:7])
	want := "User asked: " + strings.Repeat("u", 100) + "\nAssistant: calling\n  Called tools: a/b, a/b"
	if got != want {
		t.Fatalf("SummarizeDropped = %q", got)
	}
}

// resultWithoutCall is the id of the first tool result in msgs whose
// call is not before it, or "".
func resultWithoutCall(msgs []Message) string {
	called := map[string]bool{}
	for _, m := range msgs {
		switch m.Role {
		case RoleToolCall:
			called[m.ToolCallID()] = true
		case RoleToolResult:
			if !called[m.ToolCallID()] {
				return m.ToolCallID()
			}
		}
	}
	return ""
}

// TestTrimDropsEveryResultWithItsCall: a dropped block of tool calls
// takes every result that follows it, so that no kept result lacks its
// call, whatever the budget, even when a result is repeated (the input
// messages are the client's) or the results come in another order.
func TestTrimDropsEveryResultWithItsCall(t *testing.T) {
	result := func(id, content string) Message {
		return Message{Role: RoleToolResult, Content: content, Metadata: map[string]any{MetaToolCallID: id}}
	}
	long := strings.Repeat("r", 60)
	tail := []Message{{Role: RoleAssistant, Content: "final"}, {Role: RoleUser, Content: "next"}}
	cases := []struct {
		name string
		msgs []Message
	}{
		{"a repeated result", []Message{toolCallMessage("c1", "a/b", nil), result("c1", long), result("c1", long)}},
		{"a repeated result after two calls", []Message{toolCallMessage("c1", "a/b", nil), toolCallMessage("c2", "a/b", nil), result("c2", long), result("c1", long), result("c2", "again")}},
		{"results in reverse order", []Message{toolCallMessage("c1", "a/b", nil), toolCallMessage("c2", "a/b", nil), result("c2", long), result("c1", long)}},
		{"two blocks", []Message{toolCallMessage("c1", "a/b", nil), result("c1", long), {Role: RoleAssistant, Content: "more"}, toolCallMessage("c2", "a/b", nil), result("c2", long)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msgs := append([]Message{{Role: RoleSystem, Content: "sys"}, {Role: RoleUser, Content: strings.Repeat("u", 100)}}, tc.msgs...)
			msgs = append(msgs, tail...)
			trimmed := 0
			for budget := 20; budget <= EstimateChars(msgs)+10; budget++ {
				out, trim := TrimToContextWindow(msgs, budget, 0)
				if id := resultWithoutCall(out); id != "" {
					t.Fatalf("budget %d: result %s kept without its call: %v", budget, id, out)
				}
				if trim != nil && len(trim.Dropped) > 1 {
					trimmed++
				}
			}
			if trimmed == 0 {
				t.Fatal("no budget dropped a block of tool calls")
			}
		})
	}
}

// TestTrimBudget: how many of the oldest messages a trim drops, at the
// edges of the budget: a list that fits exactly is left alone, the size
// outside the list (the system prompt) counts, dropping stops once the
// list is at the budget less the reserve, and a list of system messages
// only, which has nothing to drop, is left alone.
func TestTrimBudget(t *testing.T) {
	user := func(n int) Message { return Message{Role: RoleUser, Content: strings.Repeat("u", n)} } // 8+n characters
	five := []Message{user(11), user(11), user(11), user(11), user(11)}                             // 19 each, 95
	cases := []struct {
		name          string
		msgs          []Message
		budget, extra int
		dropped       int // -1: not trimmed
	}{
		{"fits exactly", five, 95, 0, -1},
		{"one over", five, 94, 0, 1},
		{"the system prompt counts", five, 95, 1, 1},
		{"down to the budget less the reserve, not below", five, 80, 0, 1}, // limit 76: 95-19 = 76
		{"one more below", five, 75, 0, 2},                                 // limit 72: 57
		{"at least two kept", five, 20, 0, 3},
		{"system messages only", []Message{{Role: RoleSystem, Content: strings.Repeat("s", 500)}, {Role: RoleSystem, Content: "x"}}, 100, 0, -1},
		{"one message", []Message{{Role: RoleSystem, Content: "s"}, user(500)}, 100, 0, -1},
		{"calls whose results have not come last", append(five[:3:3], toolCallMessage("c1", "a/b", nil), toolCallMessage("c2", "a/b", nil)), 20, 0, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, trim := TrimToContextWindow(tc.msgs, tc.budget, tc.extra)
			switch {
			case tc.dropped < 0 && (trim != nil || len(out) != len(tc.msgs)):
				t.Fatalf("trimmed: %d messages of %d kept", len(out), len(tc.msgs))
			case tc.dropped >= 0 && (trim == nil || len(trim.Dropped) != tc.dropped):
				t.Fatalf("trim %+v, want %d dropped", trim, tc.dropped)
			}
		})
	}
}

func TestContextCompactorFallsBack(t *testing.T) {
	req := ModelRequest{Messages: []Message{{Role: RoleUser, Content: "[Context summary: det]"}, {Role: RoleUser, Content: "x"}}, Trim: &TrimResult{SummaryIndex: 0}}
	good := IO{Compactor: compactorFunc(func() (string, error) { return "llm summary", nil })}
	if got := good.compactView(context.Background(), req); got[0].Content != "[Context summary: llm summary]" || req.Messages[0].Content != "[Context summary: det]" {
		t.Fatalf("compactor result not used (or request mutated): %q", got[0].Content)
	}
	for _, bad := range []IO{
		{Compactor: compactorFunc(func() (string, error) { return "", errors.New("down") })},
		{Compactor: compactorFunc(func() (string, error) { return "  ", nil })},
		{Compactor: compactorFunc(func() (string, error) { panic("boom") })},
	} {
		if got := bad.compactView(context.Background(), req); got[0].Content != "[Context summary: det]" {
			t.Fatalf("fallback not used: %q", got[0].Content)
		}
	}
}

type compactorFunc func() (string, error)

func (f compactorFunc) CompactContext(context.Context, []Message) (string, error) { return f() }

func TestPrincipal(t *testing.T) {
	c, err := ParseCallerContext(map[string]string{"x-agents-api-chain-depth": "3", "X-Agents-Api-Caller-Host": "https://other.example", "X-Agents-Api-Caller-User": "7"}, "root-1", 0)
	if err != nil || c.ChainDepth != 3 || !c.IsCrossSite() || c.ChainRoot != "root-1" {
		t.Fatalf("parse: %+v %v", c, err)
	}
	top, err := ParseCallerContext(nil, "root-2", 0)
	if err != nil || top.IsCrossSite() || top.ChainDepth != 0 {
		t.Fatalf("top of chain: %+v %v", top, err)
	}
	for _, h := range []map[string]string{
		{HeaderChainDepth: "17"}, {HeaderChainDepth: "-1"}, {HeaderChainDepth: "two"},
		{HeaderCallerHost: "not a url"}, {HeaderCallerUser: "ann"},
	} {
		if _, err := ParseCallerContext(h, "r", 0); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%v accepted: %v", h, err)
		}
	}
	p := &Principal{Caller: &CallerContext{ChainDepth: 17, CallerHost: "self"}}
	if err := p.Validate(); err == nil {
		t.Fatal("depth 17 accepted")
	}
	_, err = NewMachine(&FixedClock{T: t0}).Start(context.Background(), StartInput{RunID: "r", SessionID: "s", Messages: user("x"), Config: RunConfig{Model: scripted(), Principal: p}})
	if !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("run with a too-deep chain started: %v", err)
	}
	safe := (&Principal{ActorID: "a", TokenID: "tok", CapabilityCeiling: []string{"x"}}).SafeMetadata()
	if _, leak := safe["token_id"]; leak || len(safe) != 1 {
		t.Fatalf("safe metadata leaks: %v", safe)
	}
}

func TestSteerValidation(t *testing.T) {
	_, run, _ := pausedClientRun(t)
	m := NewMachine(&FixedClock{T: t0})
	for _, in := range []Steer{{Content: "  "}, {Content: strings.Repeat("x", MaxSteeringChars+1)}} {
		if _, err := m.Apply(context.Background(), run.State, run.Transcript, in); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("steer %d chars accepted: %v", len(in.Content), err)
		}
	}
	out, err := m.Apply(context.Background(), run.State, run.Transcript, Steer{Content: "hi"})
	if err != nil || out.State.Status != StatusRuntimeToolPending || len(out.State.Inbox) != 1 {
		t.Fatalf("steer while paused: %v %s", err, out.State.Status)
	}
}

func TestResolveVisibleToolsLayers(t *testing.T) {
	d := func(name string, extra map[string]any) ToolDeclaration { return serverTool(name, extra) }
	tools := []ToolDeclaration{
		d("a/read", map[string]any{"categories": []any{"read"}}),
		d("a/write", map[string]any{"categories": []any{"write"}}),
		d("a/pipeline", map[string]any{"modes": []any{"pipeline"}}),
		d("a/helper", map[string]any{"runtime": map[string]any{"runtime_tool": true}, "categories": []any{"helpers"}}),
		{Name: "client/cal", Source: "client", Executor: ExecutorClient, Scope: ScopeRun, Description: "c"},
	}
	tests := []struct {
		name    string
		policy  PolicyConfig
		hooks   func(m *Machine)
		visible string
	}{
		{"defaults hide runtime tools and other modes", PolicyConfig{}, nil, "[a/read a/write]"},
		{"pipeline mode", PolicyConfig{Mode: "pipeline"}, nil, "[a/read a/write a/pipeline]"},
		{"runtime opt-in by name and category", PolicyConfig{RuntimeTools: []string{"client/cal"}, RuntimeCategories: []string{"helpers"}}, nil, "[a/read a/write a/helper client/cal]"},
		{"agent deny mode", PolicyConfig{ToolPolicy: &ToolPolicy{Mode: "deny", Categories: []string{"write"}}}, nil, "[a/read]"},
		{"agent allow mode opts runtime tools in", PolicyConfig{ToolPolicy: &ToolPolicy{Mode: "allow", Tools: []string{"client/cal"}}}, nil, "[client/cal]"},
		{"runtime categories", PolicyConfig{Categories: []string{"write"}}, nil, "[a/write]"},
		{"allow_only", PolicyConfig{AllowOnly: []string{"a/read", "client/cal"}}, nil, "[a/read client/cal]"},
		{"explicit deny", PolicyConfig{Deny: []string{"a/read"}}, nil, "[a/write]"},
		{"access checker", PolicyConfig{}, func(m *Machine) {
			m.ToolAccess = func(_ context.Context, _ PolicyContext, d ToolDeclaration) bool { return d.Name != "a/write" }
		}, "[a/read]"},
		{"provider deny and mandatory", PolicyConfig{Categories: []string{"none"}}, func(m *Machine) {
			m.ToolPolicyProviders = []ToolPolicyProvider{func(context.Context, PolicyContext) PolicyFragment {
				return PolicyFragment{MandatoryCategories: []string{"helpers"}, DenyCategories: []string{"read"}}
			}}
		}, "[a/helper]"},
		{"deny beats mandatory", PolicyConfig{Deny: []string{"a/helper"}}, func(m *Machine) {
			m.ToolPolicyProviders = []ToolPolicyProvider{func(context.Context, PolicyContext) PolicyFragment {
				return PolicyFragment{MandatoryTools: []string{"a/helper"}}
			}}
		}, "[a/read a/write]"},
		{"panicking checker fails closed", PolicyConfig{}, func(m *Machine) {
			m.ToolAccess = func(context.Context, PolicyContext, ToolDeclaration) bool { panic("db down") }
		}, "[]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMachine(&FixedClock{T: t0})
			if tc.hooks != nil {
				tc.hooks(m)
			}
			vis, _ := m.ResolveVisibleTools(context.Background(), PolicyContext{}, tools, tc.policy)
			if got := fmt.Sprint(vis); got != tc.visible && !(tc.visible == "[]" && len(vis) == 0) {
				t.Fatalf("visible = %s, want %s", got, tc.visible)
			}
		})
	}
}

func TestPrincipalStoredRedacted(t *testing.T) {
	out, err := NewMachine(&FixedClock{T: t0}).Start(context.Background(), StartInput{RunID: "r", SessionID: "s", Messages: user("x"),
		Config: RunConfig{Model: scripted(), Principal: &Principal{ActorID: "a", RequestMetadata: map[string]any{"authorization": "Bearer x", "ip": "127.0.0.1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := MarshalState(out.State)
	if strings.Contains(string(b), "Bearer x") || !strings.Contains(string(b), `"ip":"127.0.0.1"`) {
		t.Fatalf("principal not redacted in state: %s", b)
	}
}

// TestOutputGuardrailDeniedTurnCountsUsage: the tokens of a turn whose
// reply the output guardrail denies are in usage, and they trip a
// total_tokens budget; the run fails by the guardrail either way.
func TestOutputGuardrailDeniedTurnCountsUsage(t *testing.T) {
	search := serverTool("ability/search", nil)
	tests := []struct {
		name       string
		budget     int // total_tokens ceiling; 0: none
		wantBudget string
	}{
		{"no budget", 0, ""},
		{"budget above the spend", 100, ""},
		{"budget the denied turn exceeds", 25, BudgetTotalTokens},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := RunConfig{Agent: "demo", Tools: []ToolDeclaration{search},
				Model: scripted(turn("", call("call_1", "ability/search", map[string]any{"q": "a"})), turn("The password is hunter2."))}
			if tc.budget > 0 {
				c.Budgets = map[string]int{BudgetTotalTokens: tc.budget}
			}
			sc := scenario{cfg: c, handlers: map[string]func(ToolCall) (any, error){"ability/search": echo},
				hooks: func(m *Machine) { m.Guardrails.Output = denyPasswords }}
			for runner, env := range map[string]Envelope{"in process": runInProcess(t, sc), "stepwise": runStepwise(t, sc)} {
				if env.Status != StatusFailed || env.Error == nil || env.Error.Code != "guardrail" {
					t.Errorf("%s: status %q error %+v, want failed by the guardrail", runner, env.Status, env.Error)
				}
				if got := fmt.Sprintf("%v %v %v", env.Usage["prompt_tokens"], env.Usage["completion_tokens"], env.Usage["total_tokens"]); got != "20 10 30" {
					t.Errorf("%s: usage prompt/completion/total = %s, want both turns' 20 10 30", runner, got)
				}
				if env.Budget != tc.wantBudget {
					t.Errorf("%s: budget = %q, want %q", runner, env.Budget, tc.wantBudget)
				}
				tripped := false
				for _, ev := range env.Events {
					if ev.Type == EventBudgetExceeded {
						tripped = true
						if f := ev.Fields(); fmt.Sprintf("%v %v", f["current"], f["ceiling"]) != fmt.Sprintf("30 %d", tc.budget) {
							t.Errorf("%s: budget_exceeded data %v", runner, ev.Data)
						}
					}
				}
				if tripped != (tc.wantBudget != "") {
					t.Errorf("%s: budget_exceeded emitted = %v, want %v", runner, tripped, tc.wantBudget != "")
				}
			}
		})
	}
}

// TestApprovalDecidedNamesResolver: approval_decided and the call's audit
// record name the deciding principal by its identifiers, never by its
// capability ceiling, caller claims or request metadata; a decision that
// names no principal records the decision alone.
func TestApprovalDecidedNamesResolver(t *testing.T) {
	email := serverTool("ability/send_email", map[string]any{"action_policy": "preview"})
	want := &Resolver{Tenant: "acme", ActorID: "ops-lead", AuthSource: "bearer_token", RequestContext: "rest", TokenID: "9f86d081884c7d65"}
	for _, tc := range []struct {
		decision string
		resolver *Principal
		want     *Resolver
	}{
		{"accept", approver, want},
		{"reject", approver, want},
		{"accept", nil, nil},
	} {
		t.Run(fmt.Sprintf("%s by %v", tc.decision, tc.resolver != nil), func(t *testing.T) {
			sc := scenario{
				cfg: RunConfig{Agent: "demo", Tools: []ToolDeclaration{email},
					Model: scripted(turn("", call("call_1", "ability/send_email", map[string]any{"q": "a"})), turn("ok"))},
				handlers: map[string]func(ToolCall) (any, error){"ability/send_email": echo},
				resumes: []func(RunState, *FixedClock) Input{func(st RunState, _ *FixedClock) Input {
					_, acts := st.Pending()
					return ApprovalDecision{ActionID: acts[0].ActionID, Decision: tc.decision, Resolver: tc.resolver}
				}},
			}
			for runner, env := range map[string]Envelope{"in process": runInProcess(t, sc), "stepwise": runStepwise(t, sc)} {
				var decided *Event
				for i, ev := range env.Events {
					if ev.Type == EventApprovalDecided {
						decided = &env.Events[i]
					}
				}
				if decided == nil {
					t.Fatalf("%s: no approval_decided event", runner)
				}
				wantData := map[string]string(nil)
				if tc.want != nil {
					wantData = tc.want.data()
				}
				if got, _ := decided.Fields()["resolver"].(map[string]any); fmt.Sprint(got) != fmt.Sprint(wantData) || (tc.want == nil) != (decided.Fields()["resolver"] == nil) {
					t.Errorf("%s: approval_decided resolver = %v, want %v", runner, decided.Fields()["resolver"], wantData)
				}
				if len(env.ToolAuditEvents) != 1 || env.ToolAuditEvents[0].Approval == nil {
					t.Fatalf("%s: audit events %+v, want one with an approval", runner, env.ToolAuditEvents)
				}
				got := env.ToolAuditEvents[0].Approval
				if got.Decision != tc.decision || fmt.Sprint(got.Resolver) != fmt.Sprint(tc.want) {
					t.Errorf("%s: audit approval = {%s %+v}, want {%s %+v}", runner, got.Decision, got.Resolver, tc.decision, tc.want)
				}
				b, _ := json.Marshal(env)
				for _, secret := range []string{"tok-secret-123", "approvals:decide", "caller_host"} {
					if strings.Contains(string(b), secret) {
						t.Errorf("%s: the envelope holds %q from the resolver's principal", runner, secret)
					}
				}
			}
		})
	}
}

// accessScenario runs an agent with a tool gated by the crm:write scope
// for a principal holding scopes: the model asks for the gated tool and
// for an ungated one in its first turn.
func accessScenario(name string, scopes []string) scenario {
	gated := serverTool("crm/update_contact", map[string]any{"access": map[string]any{"scopes": []any{"crm:write"}}})
	open := serverTool("crm/find_contact", nil)
	return scenario{name: name, wantStatus: StatusCompleted, model: recordView,
		handlers: map[string]func(ToolCall) (any, error){"crm/update_contact": echo, "crm/find_contact": echo},
		cfg: RunConfig{Agent: "crm", Tools: []ToolDeclaration{gated, open},
			Principal: &Principal{ActorID: "ann", Tenant: "acme", AuthSource: "bearer_token", CapabilityCeiling: scopes},
			Model: scripted(turn("", call("call_1", "crm/update_contact", map[string]any{"q": "ann"}), call("call_2", "crm/find_contact", map[string]any{"q": "ann"})),
				turn("Done."))}}
}

// TestToolAccessScopes: a tool whose declaration requires a scope is
// visible, and runs, only for a principal holding it; otherwise the model
// never sees it and a call to it by name gets tool_not_found without
// executing. Mandatory tools and allow-mode opt-ins do not override it.
func TestToolAccessScopes(t *testing.T) {
	tests := []struct {
		name     string
		scopes   []string
		hooks    func(*Machine)
		policy   PolicyConfig
		visible  bool
		executed bool
	}{
		{name: "without the scope", scopes: []string{"runs:write"}},
		{name: "with the scope", scopes: []string{"runs:write", "crm:write"}, visible: true, executed: true},
		{name: "mandatory does not override", scopes: nil, hooks: func(m *Machine) {
			m.ToolPolicyProviders = []ToolPolicyProvider{func(context.Context, PolicyContext) PolicyFragment {
				return PolicyFragment{MandatoryTools: []string{"crm/update_contact"}}
			}}
		}},
		{name: "allow mode does not override", scopes: []string{"crm:read"}, policy: PolicyConfig{ToolPolicy: &ToolPolicy{Mode: "allow", Tools: []string{"crm/update_contact", "crm/find_contact"}}}},
		{name: "the access checker still applies", scopes: []string{"crm:write"}, hooks: func(m *Machine) {
			m.ToolAccess = func(_ context.Context, _ PolicyContext, d ToolDeclaration) bool {
				return d.Name != "crm/update_contact"
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := accessScenario("", tc.scopes)
			sc.cfg.Policy = tc.policy
			sc.hooks = tc.hooks
			executed := false
			sc.handlers["crm/update_contact"] = func(c ToolCall) (any, error) { executed = true; return echo(c) }
			for runner, env := range map[string]Envelope{"in process": runInProcess(t, sc), "stepwise": runStepwise(t, sc)} {
				tools := fmt.Sprint(env.RequestMetadata["tools"])
				if strings.Contains(tools, "crm/update_contact") != tc.visible || !strings.Contains(tools, "crm/find_contact") {
					t.Errorf("%s: the model saw tools %s; crm/update_contact visible = %v, want %v", runner, tools, !tc.visible, tc.visible)
				}
				res := env.ToolExecutionResults[0].Result
				if tc.visible && !res.Success || !tc.visible && (res.Success || res.ErrorType != ErrTypeToolNotFound) {
					t.Errorf("%s: result of the gated call = %+v", runner, res)
				}
				if !env.ToolExecutionResults[1].Result.Success {
					t.Errorf("%s: the ungated call failed: %+v", runner, env.ToolExecutionResults[1].Result)
				}
			}
			if executed != tc.executed {
				t.Errorf("the gated tool executed = %v, want %v", executed, tc.executed)
			}
		})
	}
}
