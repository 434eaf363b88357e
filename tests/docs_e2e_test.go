//go:build e2e

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/internal/agents"
)

// The documentation's examples run here, so the docs cannot drift from
// what Baton does:
//
//   - TestReadmeWalkthrough runs the README's five-minute walk-through
//     (the blocks between <!-- walkthrough:start --> and
//     <!-- walkthrough:end -->) against a baton dev the test starts as
//     `make run` does, and checks the output each ```text block shows;
//   - TestHTTPAPIWalkthrough does the same for docs/http-api.md's curl
//     walk-through, TestForkWalkthrough for docs/fork-and-replay.md's and
//     TestEvalsWalkthrough for docs/evals.md's;
//   - TestDocsCodeBlocks checks every other fenced block of README.md and
//     docs/*.md: JSON parses, agents files validate against the agents
//     file's schema and Baton's checks, and any block that is not run says
//     why in a visible <!-- not run: … --> marker.

// block is a fenced code block of a Markdown file.
type block struct {
	file, lang, text string
	line             int
	// notRun is the reason of a <!-- not run: … --> marker right before
	// the block ("" when it has none).
	notRun string
	// from is the file of a <!-- from: FILE --> marker: the block is a
	// copy of part of that file (a runnable example).
	from string
	// walkthrough: the block is in a walk-through region.
	walkthrough bool
}

var (
	notRunRe = regexp.MustCompile(`^<!-- not run: (.+) -->$`)
	fromRe   = regexp.MustCompile(`^<!-- from: (\S+) -->$`)
)

// readBlocks returns the fenced blocks of a Markdown file, in order.
func readBlocks(t *testing.T, path string) []block {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	var body []string
	pending, from, walk := "", "", false
	for i, l := range strings.Split(string(b), "\n") {
		if cur != nil {
			if strings.HasPrefix(l, "```") {
				cur.text = strings.Join(body, "\n")
				out = append(out, *cur)
				cur, body = nil, nil
				continue
			}
			body = append(body, l)
			continue
		}
		switch trimmed := strings.TrimSpace(l); {
		case trimmed == "<!-- walkthrough:start -->":
			walk = true
		case trimmed == "<!-- walkthrough:end -->":
			walk = false
		case notRunRe.MatchString(trimmed):
			pending = notRunRe.FindStringSubmatch(trimmed)[1]
		case fromRe.MatchString(trimmed):
			from = fromRe.FindStringSubmatch(trimmed)[1]
		case strings.HasPrefix(l, "```"):
			cur = &block{file: path, lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), line: i + 1, notRun: pending, from: from, walkthrough: walk}
			pending, from = "", ""
		case trimmed != "":
			pending, from = "", ""
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a fenced block is never closed", path, cur.line)
	}
	return out
}

// docFiles are README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../README.md"}, files...)
}

// makeRun starts baton dev as `make run` does (bundled demo agent,
// embedded stores, a generated token) but on a free port, with extra
// environment, and returns its base URL and start-up output.
func makeRun(t *testing.T, env ...string) (string, *syncBuffer) {
	t.Helper()
	d := launchDev(t, []string{"dev", "--addr", "127.0.0.1:0"}, env...)
	return d.base, d.stdout
}

// shownLines checks that every line an output block shows is in out:
// "…" stands for anything, and the docs' http://127.0.0.1:8080 for base.
func shownLines(t *testing.T, b block, out, base string) {
	t.Helper()
	have := strings.Split(out, "\n")
	for _, want := range strings.Split(b.text, "\n") {
		want = strings.TrimSpace(strings.ReplaceAll(want, "http://127.0.0.1:8080", base))
		if want == "" {
			continue
		}
		parts := strings.Split(want, "…")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re := regexp.MustCompile(strings.Join(parts, ".*"))
		found := false
		for _, h := range have {
			if re.MatchString(h) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s:%d: the output does not show %q; it was:\n%s", b.file, b.line, want, out)
		}
	}
}

// walkthrough runs the sh blocks of a file's walk-through region in one
// shell session (a fresh directory, the built baton first on PATH, "y"
// answering prompts) and checks each output block against the output of
// the sh block before it. The first block, the one starting baton dev,
// is checked against devOut instead of run; a block starting with an
// export of BATON_URL or TOKEN is replaced by exports.
func walkthrough(t *testing.T, file, base string, devOut *syncBuffer, exports string) int {
	t.Helper()
	return walkthroughIn(t, t.TempDir(), file, base, devOut, exports)
}

// walkthroughIn is walkthrough with the blocks run in dir.
func walkthroughIn(t *testing.T, dir, file, base string, devOut *syncBuffer, exports string) int {
	t.Helper()
	env := filepath.Join(t.TempDir(), ".env.sh")
	if err := os.WriteFile(env, []byte("export PATH="+filepath.Dir(binary)+":$PATH\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	last, ran := "", 0
	for i, b := range readBlocks(t, file) {
		if !b.walkthrough {
			continue
		}
		switch {
		case b.lang == "text" && b.notRun != "":
			continue
		case b.lang == "text":
			shownLines(t, b, last, base)
			continue
		case b.lang != "sh":
			t.Fatalf("%s:%d: a walk-through block must be sh or text, got %q", file, b.line, b.lang)
		case b.notRun != "":
			continue
		case strings.Contains(b.text, "make run") && devOut != nil:
			last = devOut.String()
			continue
		}
		script := b.text
		if strings.HasPrefix(script, "export BATON_URL=") || strings.HasPrefix(script, "export TOKEN=") {
			script = exports
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail -a\n. "+env+"\n"+script+"\nexport -p > "+env)
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(strings.Repeat("y\n", 10))
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s:%d (block %d): %v\n%s\n--- output:\n%s", file, b.line, i, err, script, out)
		}
		last, ran = string(out), ran+1
	}
	return ran
}

// exportLine is the export line baton dev printed.
func exportLine(t *testing.T, devOut string) string {
	t.Helper()
	for _, l := range strings.Split(devOut, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "export BATON_URL=") {
			return l
		}
	}
	t.Fatalf("baton dev printed no export line:\n%s", devOut)
	return ""
}

// TestReadmeWalkthrough runs the README's five-minute walk-through.
func TestReadmeWalkthrough(t *testing.T) {
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself")
	}
	base, devOut := makeRun(t)
	if n := walkthrough(t, "../README.md", base, devOut, exportLine(t, devOut.String())); n < 5 {
		t.Fatalf("the walk-through ran %d blocks", n)
	}
}

// TestHTTPAPIWalkthrough runs docs/http-api.md's curl walk-through with
// the token it sets with BATON_DEV_TOKENS.
func TestHTTPAPIWalkthrough(t *testing.T) {
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("the walk-through needs jq (apt-get install jq; .ci/run installs it)")
	}
	base, devOut := makeRun(t, "BATON_DEV_TOKENS=demo=dev-token-123")
	if n := walkthrough(t, "../docs/http-api.md", base, devOut, "export TOKEN=dev-token-123 B="+base); n < 5 {
		t.Fatalf("the walk-through ran %d blocks", n)
	}
}

// TestForkWalkthrough runs docs/fork-and-replay.md's worked example: a
// fork on another model in replay mode, and the comparison.
func TestForkWalkthrough(t *testing.T) {
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself")
	}
	base, devOut := makeRun(t, "BATON_DEV_TOKENS=demo=dev-token-123")
	if n := walkthrough(t, "../docs/fork-and-replay.md", base, devOut, "export TOKEN=dev-token-123 B="+base); n != 4 {
		t.Fatalf("the walk-through ran %d blocks, want 4", n)
	}
}

// TestEvalsWalkthrough runs docs/evals.md's worked example: two recorded
// runs of the demo agent replayed as an eval.
func TestEvalsWalkthrough(t *testing.T) {
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself")
	}
	base, devOut := makeRun(t, "BATON_DEV_TOKENS=demo=dev-token-123")
	if n := walkthrough(t, "../docs/evals.md", base, devOut, "export TOKEN=dev-token-123 B="+base); n != 3 {
		t.Fatalf("the walk-through ran %d blocks, want 3", n)
	}
}

// TestAgentsFileWalkthrough runs docs/agents-file.md's checks of the
// repository's agents files, from the repository's root.
func TestAgentsFileWalkthrough(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if n := walkthroughIn(t, root, "../docs/agents-file.md", "", nil, ""); n != 2 {
		t.Fatalf("the walk-through ran %d blocks", n)
	}
}

// TestDocsCodeBlocks checks the fenced blocks outside the walk-throughs.
func TestDocsCodeBlocks(t *testing.T) {
	checked := 0
	for _, f := range docFiles(t) {
		for _, b := range readBlocks(t, f) {
			where := fmt.Sprintf("%s:%d", b.file, b.line)
			switch {
			case b.walkthrough:
				continue // run by the walk-through tests
			case b.from != "":
				src, err := os.ReadFile(filepath.Join("..", b.from))
				if err != nil || !strings.Contains(string(src), b.text) {
					t.Errorf("%s: the block is not a copy of part of %s (%v)", where, b.from, err)
				}
				checked++
			case b.lang == "json":
				if b.notRun != "" {
					continue
				}
				var v any
				if err := json.Unmarshal([]byte(b.text), &v); err != nil {
					t.Errorf("%s: not JSON (mark an excerpt with <!-- not run: an excerpt -->): %v", where, err)
					continue
				}
				checkAgentsExample(t, where, v)
				checked++
			case b.lang == "text" || b.lang == "":
				// output shown beside a command, or plain text
			case b.notRun == "":
				t.Errorf("%s: a %s block that no test runs; run it in a walk-through or mark it <!-- not run: why -->", where, b.lang)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d JSON blocks checked", checked)
	}
}

// checkAgentsExample validates a JSON block that is an agents file (an
// object with agents) or one agent (an object with slug and model).
func checkAgentsExample(t *testing.T, where string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if _, isAgent := m["slug"]; isAgent && m["model"] != nil {
		m = map[string]any{"agents": []any{m}}
	} else if _, isFile := m["agents"]; !isFile {
		return
	}
	b, _ := json.Marshal(m)
	if _, problems := agents.Validate(b); len(problems) > 0 {
		t.Errorf("%s: the agents example does not validate: %v", where, problems)
	}
}
