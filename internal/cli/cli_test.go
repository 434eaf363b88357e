package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testEnv(vars map[string]string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return vars[k] }}, &out, &errOut
}

// TestParseIntersperses: flags and positional arguments mix in any
// order, and the positional count is checked.
func TestParseIntersperses(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string
		reject  bool
		wantErr bool
	}{
		{[]string{"r-1", "act", "--reject", "--reason", "no"}, "[r-1 act] true no", false, false},
		{[]string{"--reject", "r-1", "act"}, "[r-1 act] true ", false, false},
		{[]string{"r-1"}, "", false, true},
		{[]string{"r-1", "a", "b"}, "", false, true},
		{[]string{"r-1", "a", "--bogus"}, "", false, true},
	} {
		env, _, _ := testEnv(nil)
		f := newFlags("approve", "RUN ACTION", env)
		reject := f.Bool("reject", false, "")
		reason := f.String("reason", "", "")
		pos, err := f.parse(tc.args, 2, 2)
		if (err != nil) != tc.wantErr {
			t.Fatalf("%v: err %v", tc.args, err)
		}
		if err == nil && fmt.Sprint(pos, " ", *reject, " ", *reason) != tc.want {
			t.Fatalf("%v: %v %v %q", tc.args, pos, *reject, *reason)
		}
	}
}

// TestExitCodes: each run status has its exit code.
func TestExitCodes(t *testing.T) {
	for status, want := range map[string]int{
		"completed": ExitOK, "approval_required": ExitPaused, "runtime_tool_pending": ExitPaused,
		"failed": ExitFailed, "stalled": ExitFailed, "transcript_lock_contention": ExitFailed,
		"budget_exceeded": ExitLimit, "max_turns_reached": ExitLimit, "cancelled": ExitCancelled, "interrupted": ExitCancelled,
	} {
		if got := exitCode(status); got != want {
			t.Errorf("%s: exit %d, want %d", status, got, want)
		}
	}
}

// TestResolve: flags win over the environment, which wins over the
// profile; a URL without a scheme is a usage error.
func TestResolve(t *testing.T) {
	home := t.TempDir()
	env, _, _ := testEnv(map[string]string{"HOME": home})
	if _, err := env.writeProfile(profile{URL: "http://profile:1", Token: "p-token"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(home, ".config", "baton", "config.json")); st.Mode().Perm() != 0o600 {
		t.Fatalf("profile mode %v", st.Mode())
	}
	u, tok, _ := env.resolve("", "")
	if u != "http://profile:1" || tok != "p-token" {
		t.Fatalf("profile: %s %s", u, tok)
	}
	env.Getenv = func(k string) string {
		return map[string]string{"HOME": home, "BATON_URL": "http://env:2/", "BATON_TOKEN": "e-token"}[k]
	}
	if u, tok, _ = env.resolve("", ""); u != "http://env:2" || tok != "e-token" {
		t.Fatalf("env: %s %s", u, tok)
	}
	if u, tok, _ = env.resolve("https://flag:3", "f-token"); u != "https://flag:3" || tok != "f-token" {
		t.Fatalf("flags: %s %s", u, tok)
	}
	if _, _, err := env.resolve("flag:3", ""); err == nil {
		t.Fatal("a URL without a scheme was accepted")
	}
}

// TestUsageErrors: bad command lines exit 2 with one line on stderr.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"runs"}, {"runs", "nope"}, {"submit", "r", "q"}, {"run", "--agent", "a"}, {"login", "--url", "http://x"}} {
		env, _, errOut := testEnv(map[string]string{"HOME": t.TempDir()})
		if code := Main(context.Background(), args, env); code != ExitUsage || !strings.HasPrefix(errOut.String(), "baton ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
	}
}

// TestGroupHelp: `baton runs -h` and `baton eval --help` list their
// commands on stdout and exit 0, not a usage error.
func TestGroupHelp(t *testing.T) {
	for _, args := range [][]string{{"runs", "-h"}, {"eval", "--help"}, {"runs", "help"}} {
		env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir()})
		if code := Main(context.Background(), args, env); code != ExitOK || errOut.Len() != 0 || !strings.HasPrefix(out.String(), "usage: baton "+args[0]+" <command>") || !strings.Contains(out.String(), "show ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
}

// TestFlagErrorsReadOnce: a bad flag value or an unknown flag is one
// plain line on stderr (no repeated message, no usage dump).
func TestFlagErrorsReadOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "ls", "--limit", "abc"}, "baton runs ls: --limit \"abc\" is not a valid value (want a whole number); see baton runs ls -h\n"},
		{[]string{"runs", "ls", "--bogus"}, "baton runs ls: unknown flag --bogus; see baton runs ls -h\n"},
		{[]string{"run", "--no-input=maybe", "hi"}, "baton run: --no-input \"maybe\" is not a valid value (want true or false); see baton run -h\n"},
	} {
		env, _, errOut := testEnv(map[string]string{"HOME": t.TempDir()})
		if code := Main(context.Background(), tc.args, env); code != ExitUsage || errOut.String() != tc.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut.String(), tc.want)
		}
	}
	env, _, errOut := testEnv(map[string]string{"HOME": t.TempDir()})
	if code := Main(context.Background(), []string{"runs", "ls", "-h"}, env); code != ExitOK || !strings.HasPrefix(errOut.String(), "usage: baton runs ls") {
		t.Errorf("-h: exit %d, stderr %q", code, errOut.String())
	}
}

// TestDeclareClientTools: --client-tool offers its tool unless the
// request declares it already.
func TestDeclareClientTools(t *testing.T) {
	own := map[string]any{"name": "client/a", "description": "mine", "parameters": map[string]any{"type": "object", "required": []any{"x"}}}
	body := map[string]any{"tools": []any{own}}
	if err := declareClientTools(body, map[string]string{"client/a": "./a.sh", "client/b": "./b.sh"}); err != nil {
		t.Fatal(err)
	}
	tools := body["tools"].([]any)
	if len(tools) != 2 || tools[0].(map[string]any)["description"] != "mine" || tools[1].(map[string]any)["name"] != "client/b" {
		t.Fatalf("tools %v", tools)
	}
	if err := declareClientTools(map[string]any{"tools": "x"}, map[string]string{"client/a": "a"}); err == nil {
		t.Fatal("tools that are not an array were accepted")
	}
	env, _, errOut := testEnv(map[string]string{"HOME": t.TempDir()})
	if code := Main(context.Background(), []string{"run", "--agent", "demo", "--client-tool", "get_calendar=./c.sh", "hi"}, env); code != ExitUsage || !strings.Contains(errOut.String(), "starts with client/") {
		t.Fatalf("a name without client/: exit %d, %q", code, errOut.String())
	}
}
