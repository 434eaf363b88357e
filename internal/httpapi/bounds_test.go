package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBoundsAreInclusive: a body of exactly the cap is taken; one byte
// more is refused.
func TestBoundsAreInclusive(t *testing.T) {
	e := newEnv(t) // MaxBody 64 KiB
	const max = 64 << 10
	for _, c := range []struct {
		size    int
		refused bool
	}{{max, false}, {max + 1, true}} {
		body := `{"agent":"demo","cron":"0 9 * * *","request":{"messages":[{"role":"user","content":"x"}]}}`
		body += strings.Repeat(" ", c.size-len(body))
		st, v, _ := e.do(t, "POST", "/v1/schedules", "tok-acme-123", body, nil)
		if refused := st == http.StatusRequestEntityTooLarge; refused != c.refused {
			t.Fatalf("a body of %d bytes: %d %v", c.size, st, v)
		}
	}
}

// TestLongPollWaits: GET /v1/runs/{id}?wait= holds the answer until the
// run settles, within the wait.
func TestLongPollWaits(t *testing.T) {
	e := newEnv(t)
	st, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"hi"}],
		"model":{"provider":"scripted","turns":[{"content":"Hello."}]}}`, nil)
	if st != 202 {
		t.Fatalf("start: %d %v", st, v)
	}
	id := v["run_id"].(string)
	got := make(chan map[string]any, 1)
	go func() {
		_, v, _ := e.do(t, "GET", "/v1/runs/"+id+"?wait=20", "tok-acme-123", "", nil)
		got <- v
	}()
	time.Sleep(300 * time.Millisecond) // the poll is under way
	e.pump(t)
	if v := <-got; v["status"] != "completed" {
		t.Fatalf("the long poll answered %v before the run settled", v["status"])
	}
}
