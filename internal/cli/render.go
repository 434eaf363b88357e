package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// printer writes human output, in colour only when asked (a terminal
// without NO_COLOR), and shows a waiting line on a terminal's stderr
// when nothing arrived for a while.
type printer struct {
	mu     sync.Mutex
	out    io.Writer
	colour bool
	// progress: stderr is a terminal; waiting is shown there.
	progress io.Writer
	last     time.Time
	shown    bool
	midLine  bool
	stop     chan struct{}
}

// colourOn reports whether output to a terminal may be coloured:
// NO_COLOR (any value) and TERM=dumb turn colour off.
func colourOn(env *Env, tty bool) bool {
	return tty && env.Getenv("NO_COLOR") == "" && env.Getenv("TERM") != "dumb"
}

func newPrinter(env *Env, toStderr bool) *printer {
	p := &printer{out: env.Stdout, colour: colourOn(env, env.StdoutTTY), last: time.Now()}
	if toStderr {
		p.out, p.colour = env.Stderr, colourOn(env, env.StderrTTY)
	}
	if env.StderrTTY {
		p.progress = env.Stderr
	}
	return p
}

// Colours (SGR codes).
const (
	cBold   = "1"
	cDim    = "2"
	cRed    = "31"
	cGreen  = "32"
	cYellow = "33"
	cCyan   = "36"
)

func (p *printer) paint(code, s string) string {
	if !p.colour || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// text writes streamed text as it arrives.
func (p *printer) text(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearWaiting()
	fmt.Fprint(p.out, s)
	p.midLine = !strings.HasSuffix(s, "\n")
	p.last = time.Now()
}

// line writes a whole line, after ending streamed text.
func (p *printer) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearWaiting()
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
	fmt.Fprintf(p.out, format+"\n", args...)
	p.last = time.Now()
}

func (p *printer) clearWaiting() {
	if p.shown {
		fmt.Fprint(p.progress, "\r\x1b[K")
		p.shown = false
	}
}

// startProgress shows "waiting Ns" on a terminal's stderr while nothing
// arrives for two seconds or more; the returned func stops it.
func (p *printer) startProgress(what string) func() {
	if p.progress == nil {
		return func() {}
	}
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				p.mu.Lock()
				p.clearWaiting()
				p.mu.Unlock()
				return
			case <-t.C:
				p.mu.Lock()
				if idle := time.Since(p.last); idle >= 2*time.Second && !p.midLine {
					fmt.Fprintf(p.progress, "\r\x1b[K%s", p.paint(cDim, fmt.Sprintf("… %s (%ds)", what, int(idle.Seconds()))))
					p.shown = true
				}
				p.mu.Unlock()
			}
		}
	}()
	return func() { close(stop) }
}

// compact is v as one line of JSON.
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// usageLine renders an envelope's usage map in key order.
func usageLine(u map[string]any) string {
	keys := make([]string, 0, len(u))
	for k := range u {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %v", k, u[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// costLine renders a result's cost ("" when the runtime priced nothing).
func costLine(c *runCost) string {
	if c == nil {
		return ""
	}
	s := fmt.Sprintf(" · cost: $%.6f (model $%.6f, AWS $%.6f)", c.TotalUSD, c.ModelUSD, c.AWSUSD)
	if len(c.Unpriced) > 0 {
		s += "; unpriced: " + strings.Join(c.Unpriced, ", ")
	}
	return s
}

// statusColour is the colour of a run status.
func statusColour(status string) string {
	switch status {
	case "completed":
		return cGreen
	case "runtime_tool_pending", "approval_required", "queued", "running":
		return cYellow
	}
	return cRed
}

// exitCode is the exit code of a run's status.
func exitCode(status string) int {
	switch status {
	case "completed":
		return ExitOK
	case "runtime_tool_pending", "approval_required":
		return ExitPaused
	case "budget_exceeded", "max_turns_reached":
		return ExitLimit
	case "cancelled", "interrupted":
		return ExitCancelled
	}
	return ExitFailed
}

// count is "1 turn", "2 turns".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func truncate(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:n]), " ") + "…"
}
