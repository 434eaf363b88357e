package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// longSession is n messages alternating user and assistant, numbered
// from 1.
func longSession(n int) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		msgs[i] = Message{Role: role, Content: fmt.Sprintf("message %d", i+1)}
	}
	return msgs
}

// recordingModel records every request and answers with the scripted
// model.
type recordingModel struct {
	mu   sync.Mutex
	reqs []ModelRequest
}

func (r *recordingModel) Complete(ctx context.Context, req ModelRequest) (ModelReply, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return ScriptedModel{}.Complete(ctx, req)
}

func (r *recordingModel) purposes() []string {
	var out []string
	for _, q := range r.reqs {
		out = append(out, fmt.Sprintf("%q", q.Purpose))
	}
	return out
}

func seqsOf(msgs []Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Seq
	}
	return out
}

func usageJSON(prompt, completion int) map[string]any {
	return map[string]any{"prompt_tokens": json.Number(fmt.Sprint(prompt)), "completion_tokens": json.Number(fmt.Sprint(completion))}
}

// compactingConfig is a run of one scripted turn whose 24-message
// session crosses max_messages 20, keeping the 6 newest messages.
func compactingConfig(opts map[string]any) RunConfig {
	m := scripted(turn("Answer."))
	m.Options = opts
	return RunConfig{Agent: "demo", Model: m, Compaction: &CompactionPolicy{Enabled: true, MaxMessages: 20, RecentMessages: 6}}
}

func startCompacting(t *testing.T, cfg RunConfig, io IO) (*Run, *recordingModel) {
	t.Helper()
	rec := &recordingModel{}
	if io.Model == nil {
		io.Model = rec
	}
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: io.Model, Summarizer: io.Summarizer}
	run, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: cfg, Messages: longSession(24)})
	if err != nil {
		t.Fatal(err)
	}
	return run, rec
}

func TestSummaryRequest(t *testing.T) {
	cheap := &ModelSpec{Provider: "openai", Model: "gpt-4o-mini"}
	for _, tc := range []struct {
		name       string
		policy     CompactionPolicy
		wantModel  string
		wantPrompt string
	}{
		{"the run's model and the default prompt", CompactionPolicy{Enabled: true, MaxMessages: 20, RecentMessages: 6}, "script-1", DefaultSummaryPrompt},
		{"compaction.model and compaction.prompt", CompactionPolicy{Enabled: true, MaxMessages: 20, RecentMessages: 6, Model: cheap, Prompt: "Summarize in French."}, "gpt-4o-mini", "Summarize in French."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMachine(&FixedClock{T: t0})
			cfg := RunConfig{Model: scripted(turn("x")), Compaction: &tc.policy}
			msgs := append([]Message{{Role: RoleSystem, Content: "House rules."}}, longSession(24)...)
			msgs = append(msgs, toolCallMessage("call_1", "ability/search", map[string]any{"q": "weather"}), Message{Role: RoleToolResult, Content: "sunny", Metadata: map[string]any{MetaToolCallID: "call_1", MetaToolName: "ability/search", MetaSuccess: true}})
			out, err := m.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: cfg, Messages: msgs, FirstSeq: 1})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := m.Plan(context.Background(), out.State, out.Messages, out.Next[0])
			if err != nil || plan.Kind != PlanCompact {
				t.Fatalf("plan %+v, %v", plan, err)
			}
			c := plan.Compaction
			// 26 non-system messages, 6 kept: the tool call and its result
			// stay together among the newest.
			if len(c.Messages) != 20 || c.Retained != 6 || c.Through != 21 {
				t.Fatalf("compacts %d messages through %d, retains %d", len(c.Messages), c.Through, c.Retained)
			}
			req := c.Model
			if req.Purpose != PurposeSummary || req.Summarizes != 20 || req.Model.Model != tc.wantModel || req.System != tc.wantPrompt ||
				len(req.Tools) != 0 || req.Turn != 1 || req.RunID != "r-1" || req.SessionID != "s-1" {
				t.Fatalf("summary request %+v", req)
			}
			if len(req.Messages) != 1 || req.Messages[0].Role != RoleUser {
				t.Fatalf("summary request messages %+v", req.Messages)
			}
			text := req.Messages[0].Content
			for _, want := range []string{"Summarize these 20 earlier messages", "[user]\nmessage 1\n", "[assistant]\nmessage 20\n"} {
				if !strings.Contains(text, want) {
					t.Errorf("summary input lacks %q:\n%s", want, text)
				}
			}
			for _, kept := range []string{"message 21", "House rules.", "weather"} {
				if strings.Contains(text, kept) {
					t.Errorf("summary input holds %q, which is not compacted:\n%s", kept, text)
				}
			}
		})
	}
}

func TestSummaryInputWritesToolsAndCaps(t *testing.T) {
	long := strings.Repeat("é", SummaryMessageMaxChars+5)
	got := SummaryInput([]Message{
		{Role: RoleUser, Content: "[Conversation summary: before]", Metadata: map[string]any{MetaCompaction: map[string]any{"status": "compacted"}}},
		toolCallMessage("call_1", "ability/search", map[string]any{"q": "x"}),
		{Role: RoleToolResult, Content: long, Metadata: map[string]any{MetaToolCallID: "call_1", MetaToolName: "ability/search", MetaSuccess: false}},
	})
	for _, want := range []string{
		"[summary of the messages before these]\n[Conversation summary: before]\n",
		"[assistant called tool ability/search (call call_1)]\n{\"q\":\"x\"}\n",
		"[result of tool ability/search (call call_1): failed]\n",
		" … [5 more characters left out]\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary input lacks %q:\n%.300s", want, got)
		}
	}
	// A message of exactly the cap is written whole.
	exact := strings.Repeat("é", SummaryMessageMaxChars)
	if got := SummaryInput([]Message{{Role: RoleUser, Content: exact}}); !strings.Contains(got, "\n"+exact+"\n") || strings.Contains(got, "left out") {
		t.Errorf("a message of exactly %d characters was cut:\n%.300s", SummaryMessageMaxChars, got[len(got)-100:])
	}
}

// TestCompactionPlanKeepsRecent: a compaction keeps the policy's
// recent_messages newest messages, or half of max_messages (rounded up)
// when it names none, and summarizes the rest.
func TestCompactionPlanKeepsRecent(t *testing.T) {
	for _, tc := range []struct {
		max, recent, n, retained int
	}{
		{4, 0, 6, 2},
		{5, 0, 7, 3},
		{4, 1, 6, 1},
		{4, 3, 6, 3},
	} {
		msgs := longSession(tc.n)
		for i := range msgs {
			msgs[i].Seq = int64(i + 1)
		}
		p := &CompactionPolicy{Enabled: true, MaxMessages: tc.max, RecentMessages: tc.recent}
		compact, through, retained, ok := compactionPlan(p, msgs)
		if !ok || retained != tc.retained || len(compact) != tc.n-tc.retained || through != int64(tc.n-tc.retained) {
			t.Errorf("max %d, recent %d, %d messages: compacts %d through %d, retains %d (ok %v); want %d retained",
				tc.max, tc.recent, tc.n, len(compact), through, retained, ok, tc.retained)
		}
	}
}

func TestScriptedSummaryConsumesNoTurn(t *testing.T) {
	run, rec := startCompacting(t, compactingConfig(nil), IO{})
	if run.State.Status != StatusCompleted || run.Envelope().FinalContent != "Answer." {
		t.Fatalf("status %s, final %q, error %+v", run.State.Status, run.Envelope().FinalContent, run.State.Error)
	}
	if got := fmt.Sprint(rec.purposes()); got != `["summary" ""]` {
		t.Fatalf("model calls %s, want a summary then one turn", got)
	}
	summary := run.Transcript[24]
	if summary.Seq != 25 || summary.Content != "[Conversation summary: Summary of 18 earlier messages.]" {
		t.Fatalf("summary message %+v", summary)
	}
	// The turn saw the summary and the 6 newest messages only.
	if got := fmt.Sprint(seqsOf(rec.reqs[1].Messages)); got != "[25 19 20 21 22 23 24]" {
		t.Fatalf("the turn saw messages %s", got)
	}
	// The transcript keeps every message.
	if len(run.Transcript) != 26 || run.Transcript[0].Content != "message 1" {
		t.Fatalf("transcript of %d messages", len(run.Transcript))
	}

	reply, err := ScriptedModel{}.Complete(context.Background(), ModelRequest{Purpose: PurposeSummary, Summarizes: 3,
		Model: ModelSpec{Provider: ProviderScripted, Options: map[string]any{ScriptedSummary: "They planned a trip."}}})
	if err != nil || reply.Content != "They planned a trip." || reply.Usage != nil {
		t.Fatalf("options.summary: %+v, %v", reply, err)
	}
}

func TestSummaryUsageIsCounted(t *testing.T) {
	ctx := context.Background()
	cfg := compactingConfig(map[string]any{ScriptedSummaryUsage: usageJSON(40, 8)})
	m := NewMachine(&FixedClock{T: t0})
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", Config: cfg, Messages: longSession(24), FirstSeq: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, tr := out.State, out.Messages
	plan, err := m.Plan(ctx, st, tr, out.Next[0])
	if err != nil {
		t.Fatal(err)
	}
	in := IO{Model: ScriptedModel{}}.Perform(ctx, out.Next[0], plan)
	first, err := m.Apply(ctx, st, tr, in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"compaction":{"completion_tokens":8,"prompt_tokens":40,"total_tokens":48},"completion_tokens":8,"prompt_tokens":40,"total_tokens":48}`
	if got, _ := CanonicalJSON(first.State.Usage); string(got) != want {
		t.Fatalf("usage after the summary %s, want %s", got, want)
	}
	if st.Usage.compaction != nil {
		t.Fatal("Apply changed the caller's usage")
	}
	var done Event
	for _, ev := range first.Events {
		if ev.Type == EventCompactionCompleted {
			done = ev
		}
	}
	if got, _ := CanonicalJSON(done.Data); !strings.Contains(string(got), `"provider":"scripted","retained_count":6`) || !strings.Contains(string(got), `"usage":{"completion_tokens":8,"prompt_tokens":40,"total_tokens":48}`) {
		t.Fatalf("compaction_completed %s", got)
	}

	// In process, the turn's usage adds to the totals but not to the
	// compaction line, which a second summary call would add to.
	run, _ := startCompacting(t, cfg, IO{})
	want = `{"compaction":{"completion_tokens":8,"prompt_tokens":40,"total_tokens":48},"completion_tokens":13,"prompt_tokens":50,"total_tokens":63}`
	if got, _ := CanonicalJSON(run.Envelope().Usage); string(got) != want {
		t.Fatalf("envelope usage %s, want %s", got, want)
	}
	line := run.State.Usage.compaction
	next := (&transition{st: &RunState{Usage: Usage{compaction: line}}, out: &Output{}})
	next.countSummaryUsage(usageJSON(1, 1))
	if got, _ := CanonicalJSON(next.st.Usage.compaction); string(got) != `{"completion_tokens":9,"prompt_tokens":41,"total_tokens":50}` {
		t.Fatalf("second summary line %s", got)
	}
	if got, _ := CanonicalJSON(line); string(got) != `{"completion_tokens":8,"prompt_tokens":40,"total_tokens":48}` {
		t.Fatalf("counting a second summary changed the earlier line: %s", got)
	}
}

func TestSummaryTripsTotalTokensBudget(t *testing.T) {
	cfg := compactingConfig(map[string]any{ScriptedSummaryUsage: usageJSON(40, 8)})
	cfg.Budgets = map[string]int{BudgetTotalTokens: 45}
	run, rec := startCompacting(t, cfg, IO{})
	env := run.Envelope()
	if env.Status != StatusBudgetExceeded || env.Budget != BudgetTotalTokens || env.Completed || env.TurnCount != 0 {
		t.Fatalf("status %s, budget %q, turns %d", env.Status, env.Budget, env.TurnCount)
	}
	if got := fmt.Sprint(rec.purposes()); got != `["summary"]` {
		t.Fatalf("model calls %s: no turn may follow the tripped budget", got)
	}
	if len(run.steps) != 0 || run.State.ModelStep != 0 {
		t.Fatalf("steps left scheduled: %+v, model step %d", run.steps, run.State.ModelStep)
	}
	if n := len(eventsOf(run.Events, EventBudgetExceeded)); n != 1 {
		t.Fatalf("%d budget_exceeded events", n)
	}
}

func TestSummaryFailureKeepsTranscript(t *testing.T) {
	for _, tc := range []struct {
		name, wantErr string
		opts          map[string]any
	}{
		{"provider error", "scripted model error: summary model overloaded", map[string]any{ScriptedSummaryError: "summary model overloaded"}},
		{"empty summary", "the summarizer returned an empty summary", map[string]any{ScriptedSummary: "  "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, rec := startCompacting(t, compactingConfig(tc.opts), IO{})
			if run.State.Status != StatusCompleted {
				t.Fatalf("status %s: a failed summary must not stop the run", run.State.Status)
			}
			failed := eventsOf(run.Events, EventCompactionFailed)
			if len(failed) != 1 || failed[0].Fields()["error"] != tc.wantErr || failed[0].Fields()["transcript_preserved"] != true || failed[0].Fields()["provider"] != ProviderScripted {
				t.Fatalf("compaction_failed events %+v", failed)
			}
			if len(eventsOf(run.Events, EventCompactionCompleted)) != 0 {
				t.Fatal("compaction_completed after a failure")
			}
			// Every message stays, no summary is added, and the turn saw
			// them all.
			if len(run.Transcript) != 25 || run.Transcript[24].Role != RoleAssistant {
				t.Fatalf("transcript of %d messages, last %+v", len(run.Transcript), run.Transcript[len(run.Transcript)-1])
			}
			if got := len(rec.reqs[len(rec.reqs)-1].Messages); got != 24 {
				t.Fatalf("the turn saw %d messages, want all 24", got)
			}
		})
	}
}

func TestSummarizerTakesPrecedence(t *testing.T) {
	var got SummaryRequest
	sum := SummarizerFunc(func(_ context.Context, r SummaryRequest) (string, error) {
		got = r
		return "written by the hook", nil
	})
	run, rec := startCompacting(t, compactingConfig(map[string]any{ScriptedSummaryUsage: usageJSON(40, 8)}), IO{Summarizer: sum})
	if p := fmt.Sprint(rec.purposes()); p != `[""]` {
		t.Fatalf("model calls %s: the summarizer must replace the summary call", p)
	}
	if len(got.Messages) != 18 || run.Transcript[24].Content != "[Conversation summary: written by the hook]" {
		t.Fatalf("summarizer got %d messages; summary %q", len(got.Messages), run.Transcript[24].Content)
	}
	if run.State.Usage.compaction != nil {
		t.Fatal("a hook's summary has a usage line")
	}
	done := eventsOf(run.Events, EventCompactionCompleted)
	if len(done) != 1 || done[0].Fields()["provider"] != nil {
		t.Fatalf("compaction_completed %+v", done)
	}
}

func TestCompactionPolicyValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy *CompactionPolicy
		want   string
	}{
		{"nil", nil, ""},
		{"disabled and empty", &CompactionPolicy{}, ""},
		{"enabled", &CompactionPolicy{Enabled: true, MaxMessages: 20, RecentMessages: 8}, ""},
		{"default recent", &CompactionPolicy{Enabled: true, MaxMessages: 2}, ""},
		{"enabled without max", &CompactionPolicy{Enabled: true}, "compaction.max_messages must be at least 2"},
		{"negative max", &CompactionPolicy{MaxMessages: -1}, "compaction.max_messages must not be negative"},
		{"negative recent", &CompactionPolicy{Enabled: true, MaxMessages: 4, RecentMessages: -1}, "compaction.recent_messages must not be negative"},
		{"recent not below max", &CompactionPolicy{Enabled: true, MaxMessages: 4, RecentMessages: 4}, "compaction.recent_messages (4) must be below compaction.max_messages (4)"},
		{"model without provider", &CompactionPolicy{Enabled: true, MaxMessages: 4, Model: &ModelSpec{Model: "m"}}, "compaction.model.provider is required"},
		{"bad scripted summary", &CompactionPolicy{Enabled: true, MaxMessages: 4, Model: &ModelSpec{Provider: ProviderScripted, Options: map[string]any{ScriptedSummary: 3}}}, "compaction.model.options: scripted model: summary must be a string"},
		{"bad scripted usage", &CompactionPolicy{Enabled: true, MaxMessages: 4, Model: &ModelSpec{Provider: ProviderScripted, Options: map[string]any{ScriptedSummaryUsage: "lots"}}}, "summary_usage must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			// A run configuration with the policy is refused too.
			cfg := RunConfig{Model: scripted(), Compaction: tc.policy}
			if err := cfg.withDefaults().Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RunConfig.Validate: %v", err)
			}
		})
	}
	bad := RunConfig{Model: ModelSpec{Provider: ProviderScripted, Options: map[string]any{ScriptedEchoRequest: "yes"}}}
	if err := bad.withDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "model.options: scripted model: echo_request must be true or false") {
		t.Fatalf("echo_request: %v", err)
	}
}
