//go:build e2e

package tests

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCLIMemories runs baton memories against the real API (the system
// served in process, its memory store seeded): ls follows next_cursor
// past the API's page of 100 and lists every memory of the caller's
// own subject, as a table or JSON; another subject is refused without
// memories:subject and listed with it, never another tenant's; rm
// deletes one memory, says when there is none, and rm --all --subject
// erases the subject without asking and prints the count.
func TestCLIMemories(t *testing.T) {
	s := serveMemories(t)
	var texts []string
	for i := 1; i <= 130; i++ {
		texts = append(texts, fmt.Sprintf("Ann's fact number %d: %s", i, strings.Repeat("detail ", i%20)))
	}
	s.seed(t, "acme", "ann", texts...)
	s.seed(t, "acme", "bob", "Bob works nights.")
	s.seed(t, "globex", "ann", "Globex's Ann is another person.")
	ann, office := cliEnv(t, s.d, tokAcme), cliEnv(t, s.d, tokMemBackOffice)

	r := runCLI(t, ann, "", "memories", "ls")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 131 || !strings.HasPrefix(lines[0], "ID ") || !strings.HasPrefix(lines[1], "mem-ann-001 ") || !strings.Contains(lines[1], " tool ") ||
		!strings.HasPrefix(lines[130], "mem-ann-130 ") || !strings.Contains(lines[2], " extraction ") {
		t.Fatalf("ls: exit %d, %d lines, stderr %q, first %q", r.code, len(lines), r.stderr, lines[:min(3, len(lines))])
	}
	for _, l := range lines {
		if len([]rune(l)) > 28+1+19+1+10+1+73 {
			t.Fatalf("a row longer than the table: %q", l)
		}
	}
	r = runCLI(t, ann, "", "memories", "ls", "--json", "--limit", "120")
	var raw struct {
		Memories   []map[string]any `json:"memories"`
		NextCursor string           `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &raw); r.code != 0 || err != nil || len(raw.Memories) != 120 || raw.NextCursor == "" ||
		raw.Memories[0]["text"] != texts[0] || raw.Memories[0]["source_run_id"] != s.runID || raw.Memories[0]["subject"] != "ann" {
		t.Fatalf("ls --json --limit 120: exit %d, %d memories, next %q, %.300s", r.code, len(raw.Memories), raw.NextCursor, r.stdout)
	}

	if r = runCLI(t, ann, "", "memories", "ls", "--subject", "bob"); r.code != 1 || !strings.Contains(r.stderr, "forbidden") || !strings.Contains(r.stderr, "memories:subject") {
		t.Fatalf("ls bob without memories:subject: %d %q", r.code, r.stderr)
	}
	if r = runCLI(t, office, "", "memories", "ls", "--subject", "bob"); r.code != 0 || !strings.Contains(r.stdout, "Bob works nights.") {
		t.Fatalf("the back office lists bob: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, cliEnv(t, s.d, tokMemGlobexAnn), "", "memories", "ls"); r.code != 0 || !strings.Contains(r.stdout, "Globex's Ann") || strings.Contains(r.stdout, "fact number") {
		t.Fatalf("globex's ann: %d %q", r.code, r.stdout)
	}

	if r = runCLI(t, ann, "", "memories", "rm", "mem-ann-007"); r.code != 0 || r.stdout != "deleted memory mem-ann-007\n" {
		t.Fatalf("rm: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, ann, "", "memories", "rm", "mem-ann-007"); r.code != 1 || !strings.Contains(r.stderr, "baton memories rm: not_found:") {
		t.Fatalf("rm again: %d %q", r.code, r.stderr)
	}
	if r = runCLI(t, ann, "", "memories", "rm", "--all", "--subject", "ann"); r.code != 0 || !strings.HasPrefix(r.stdout, "erased the memories of ann: 129 deleted (at ") {
		t.Fatalf("rm --all: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r = runCLI(t, ann, "", "memories", "ls"); r.code != 0 || r.stdout != "no memories\n" {
		t.Fatalf("ls after the erasure: %d %q", r.code, r.stdout)
	}
	if a, b, g := s.count(t, "acme", "ann"), s.count(t, "acme", "bob"), s.count(t, "globex", "ann"); a != 0 || b != 1 || g != 1 {
		t.Fatalf("after the CLI: acme/ann %d, acme/bob %d, globex/ann %d; want 0, 1, 1", a, b, g)
	}
}
