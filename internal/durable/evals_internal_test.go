package durable

import (
	"fmt"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

// TestSmallCacheHoldsUpTo64: 64 values are all kept; the 65th starts
// the cache over.
func TestSmallCacheHoldsUpTo64(t *testing.T) {
	var c smallCache[int]
	for i := 0; i < 64; i++ {
		c.put(fmt.Sprint(i), i)
	}
	for i := 0; i < 64; i++ {
		if v, ok := c.get(fmt.Sprint(i)); !ok || v != i {
			t.Fatalf("value %d of 64: %d %v", i, v, ok)
		}
	}
	c.put("64", 64)
	if _, ok := c.get("0"); ok {
		t.Fatal("a 65th value kept the first 64")
	}
	if v, ok := c.get("64"); !ok || v != 64 {
		t.Fatalf("the 65th value: %d %v", v, ok)
	}
}

// TestJudgeScore: a judge's answer scores from 0 to 1, both included
// (passing at DefaultJudgeMinScore), in a code fence or not; a score
// outside, a missing one or a judge's run that did not complete fail
// the check with why.
func TestJudgeScore(t *testing.T) {
	done := core.RunState{RunID: "j", Status: core.StatusCompleted}
	for _, tc := range []struct {
		st     core.RunState
		answer string
		score  float64
		pass   bool
		detail string
	}{
		{done, `{"score": 0, "reason": "wrong"}`, 0, false, "the judge scored 0 (under 0.5): wrong"},
		{done, `{"score": 1, "reason": "right"}`, 1, true, ""},
		{done, `{"score": 0.5}`, 0.5, true, ""},
		{done, "```json\n{\"score\": 0.49, \"reason\": \"short\"}\n```", 0.49, false, "the judge scored 0.49 (under 0.5): short"},
		{done, `{"score": 1.01}`, 0, false, `the judge's answer is not {"score": 0 to 1`},
		{done, `{"score": -0.01}`, 0, false, `the judge's answer is not {"score": 0 to 1`},
		{done, `{"reason": "no score"}`, 0, false, `the judge's answer is not {"score": 0 to 1`},
		{done, `Looks fine.`, 0, false, `the judge's answer is not {"score": 0 to 1`},
		{core.RunState{RunID: "j", Status: core.StatusFailed}, `{"score": 1}`, 0, false, "the judge's run ended failed"},
	} {
		js, check := judgeScore(tc.st, tc.answer)
		if js.RunID != "j" || js.Score != tc.score || check.Pass != tc.pass || !strings.HasPrefix(check.Detail, tc.detail) || (tc.detail == "") != (check.Detail == "") {
			t.Errorf("%s %q: score %v, check %+v", tc.st.Status, tc.answer, js.Score, check)
		}
	}
}
