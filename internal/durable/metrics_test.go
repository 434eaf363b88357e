package durable_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// emfLine is one parsed EMF line: its declared namespace, dimension
// set and metric units, and its dimension and metric values.
type emfLine struct {
	ns     string
	dims   []string
	units  map[string]string
	fields map[string]any
}

func parseEMF(t *testing.T, b []byte) []emfLine {
	t.Helper()
	var out []emfLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var raw struct {
			AWS struct {
				Timestamp         int64
				CloudWatchMetrics []struct {
					Namespace  string
					Dimensions [][]string
					Metrics    []struct{ Name, Unit string }
				}
			} `json:"_aws"`
		}
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("not JSON: %s", sc.Bytes())
		}
		var fields map[string]any
		_ = json.Unmarshal(sc.Bytes(), &fields)
		if len(raw.AWS.CloudWatchMetrics) != 1 || len(raw.AWS.CloudWatchMetrics[0].Dimensions) != 1 || raw.AWS.Timestamp < t0.UnixMilli() {
			t.Fatalf("EMF metadata: %s", sc.Bytes())
		}
		m := raw.AWS.CloudWatchMetrics[0]
		l := emfLine{ns: m.Namespace, dims: m.Dimensions[0], units: map[string]string{}, fields: fields}
		for _, x := range m.Metrics {
			l.units[x.Name] = x.Unit
			if _, ok := fields[x.Name]; !ok {
				t.Fatalf("metric %s without a value: %s", x.Name, sc.Bytes())
			}
		}
		for _, d := range l.dims {
			if _, ok := fields[d].(string); !ok {
				t.Fatalf("dimension %s without a value: %s", d, sc.Bytes())
			}
		}
		out = append(out, l)
	}
	return out
}

func TestEMFMetricsOfARun(t *testing.T) {
	h := newHarness(t, nil)
	var buf bytes.Buffer
	h.opts.Metrics = durable.NewEMF(&buf)
	h.eng = durable.New(h.opts)
	runID := h.start(t, scripted(turn("", call("c1", "ability/search", map[string]any{"q": "x"})), turn("done")), nil)
	h.pump(t)
	// A duplicate delivery of the first step is dropped as stale.
	if err := h.eng.HandleStep(t.Context(), core.Step{Kind: core.StepModelTurn, Format: core.StepFormat, RunID: runID, Seq: 1}, durable.Attempt{ReceiveCount: 2, Owner: "dup"}); err != nil {
		t.Fatal(err)
	}
	lines := parseEMF(t, buf.Bytes())
	type key struct{ metric, dims string }
	got := map[key]float64{}
	for _, l := range lines {
		if l.ns != "Baton" {
			t.Fatalf("namespace %q", l.ns)
		}
		dims := ""
		for _, d := range l.dims {
			dims += d + "=" + l.fields[d].(string) + ";"
		}
		for name, unit := range l.units {
			if want := map[string]string{"StepDuration": "Milliseconds", "ModelLatency": "Milliseconds"}[name]; want != "" && unit != want || want == "" && unit != "Count" {
				t.Errorf("%s in %s", name, unit)
			}
			got[key{name, dims}] += l.fields[name].(float64)
		}
	}
	want := map[key]float64{
		{"Steps", "Outcome=ok;StepKind=model_turn;"}:           2,
		{"Steps", "Outcome=ok;StepKind=tool_call;"}:            1,
		{"Steps", "Outcome=stale;StepKind=model_turn;"}:        1,
		{"StepDuration", "Outcome=ok;StepKind=model_turn;"}:    0, // the fixed clock
		{"StepDuration", "Outcome=ok;StepKind=tool_call;"}:     0,
		{"StepDuration", "Outcome=stale;StepKind=model_turn;"}: 0,
		{"ModelLatency", "Provider=scripted;"}:                 0,
		{"InputTokens", "Provider=scripted;"}:                  6, // 3 per turn (turn())
		{"OutputTokens", "Provider=scripted;"}:                 4,
		{"RunsFinished", "Status=completed;"}:                  1,
		{"StepDeliveries", "Delivery=queued;"}:                 4,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s{%s} = %v (present %v), want %v", k.metric, k.dims, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("metrics %v, want exactly %v", got, want)
	}
}

func TestEMFCountsInDoubtResultsAndRetries(t *testing.T) {
	cs := &crashingStore{tool: "ability/charge"}
	h := newHarness(t, func(s durable.Store) durable.Store { cs.Store = s; return cs })
	var buf bytes.Buffer
	h.opts.Metrics = durable.NewEMF(&buf)
	h.eng = durable.New(h.opts)
	h.start(t, scripted(turn("", call("c1", "ability/charge", map[string]any{})), turn("done")), nil)
	deliver := func(count int) error {
		ds, _ := h.q.Receive(t.Context(), 1, 0)
		if len(ds) == 0 {
			t.Fatal("no message")
		}
		var step core.Step
		_ = json.Unmarshal(ds[0].Body, &step)
		err := h.eng.HandleStep(t.Context(), step, durable.Attempt{ReceiveCount: count, Owner: ds[0].ReceiptHandle})
		if err == nil {
			_ = h.q.Delete(t.Context(), ds[0].ReceiptHandle)
		}
		return err
	}
	if err := deliver(1); err != nil { // model turn
		t.Fatal(err)
	}
	if err := deliver(1); err == nil { // the tool runs, the commit fails
		t.Fatal("crash not reported")
	}
	h.clock.T = h.clock.T.Add(2 * time.Hour)
	if err := deliver(2); err != nil { // outcome unknown: in_doubt
		t.Fatal(err)
	}
	h.pump(t)
	counts := map[string]float64{}
	for _, l := range parseEMF(t, buf.Bytes()) {
		for name := range l.units {
			k := name
			for _, d := range l.dims {
				k += ";" + d + "=" + l.fields[d].(string)
			}
			counts[k] += l.fields[name].(float64)
		}
	}
	for k, v := range map[string]float64{
		"Steps;Outcome=retry;StepKind=tool_call": 1,
		"Steps;Outcome=ok;StepKind=tool_call":    1,
		"ToolErrors;ErrorType=in_doubt":          1,
		"InDoubt":                                1,
		"RunsFinished;Status=completed":          1,
	} {
		if counts[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, counts[k], v, counts)
		}
	}
}
