//go:build e2e

package tests

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSlowTurnRunsOnce: on baton dev with a 2 s visibility timeout, one
// scripted turn that streams for 7.5 s (30 characters, one every 250 ms)
// is one model call: the worker keeps its step message hidden while it
// works, so no second poller runs the turn again — the stream carries
// each delta once, from one call (index 0 once), and the run completes.
func TestSlowTurnRunsOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) {
		for i, a := range args {
			if a == "--visibility-timeout" {
				args = append(append([]string{}, args[:i+1]...), append([]string{"2s"}, args[i+2:]...)...)
				break
			}
		}
		d := startDev(t, args)
		const text = "Thirty characters, slowly ok."
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"slow"}],"model":{"provider":"scripted","options":{"chunk_chars":1,"chunk_delay":"250ms"},"turns":[{"content":"`+text+`"}]}}`)
		evs := readAll(t, openStream(t, d, id, ""))
		if st := endStatus(t, evs); st != "completed" {
			t.Fatalf("ended %s", st)
		}
		var streamed strings.Builder
		firsts := 0
		for _, ev := range evs {
			if ev.Event != "token" {
				continue
			}
			var tok struct {
				Delta string `json:"delta"`
				Index int    `json:"index"`
			}
			_ = json.Unmarshal([]byte(ev.Data), &tok)
			if tok.Index == 0 {
				firsts++
			}
			streamed.WriteString(tok.Delta)
		}
		if firsts != 1 || streamed.String() != text {
			t.Fatalf("%d model calls streamed %q, want one streaming %q", firsts, streamed.String(), text)
		}
	})
}
