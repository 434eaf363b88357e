package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// Exit codes. A run's final status picks its code; so does a run left at
// a pause (--no-input, or stdin closed).
const (
	ExitOK        = 0 // the command succeeded; a run completed
	ExitError     = 1 // an API, network or local error (the message says which)
	ExitUsage     = 2 // bad flags or arguments
	ExitPaused    = 3 // the run waits for a client tool result or an approval
	ExitFailed    = 4 // the run failed, stalled or lost its session lock
	ExitLimit     = 5 // the run stopped at a budget or at max_turns
	ExitCancelled = 6 // the run was cancelled or interrupted
)

// Env is what a command reads and writes: the process's streams and
// environment, injected for tests.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// StdinTTY and StdoutTTY say whether the streams are terminals.
	StdinTTY, StdoutTTY, StderrTTY bool
	HTTP                           *http.Client

	in *bufio.Reader
}

// OSEnv is the Env of the process: its standard streams and environment.
func OSEnv() *Env {
	return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		StdinTTY: isTerminal(os.Stdin), StdoutTTY: isTerminal(os.Stdout), StderrTTY: isTerminal(os.Stderr), HTTP: &http.Client{}}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Commands lists the client commands Main serves.
var Commands = []string{"run", "runs", "eval", "approve", "submit", "cancel", "steer", "interrupt", "login", "memories", "schedules"}

// AgentsCommands are the agents subcommands Main serves (baton agents
// validate is not a client command: it reads a local file only).
var AgentsCommands = []string{"publish", "versions", "diff", "alias"}

// Usage describes the client commands.
const Usage = `  run       start a run and follow it live, answering its approvals and
            client-tool requests (baton run -h)
  runs      list runs (runs ls), show one (runs show ID), list its events
            (runs events ID [--follow]), fork one at a message and follow
            the fork (runs fork ID --at SEQ [--edit TEXT] [--tools MODE]),
            compare two (runs compare A B)
  eval      evaluations (docs/cli.md): eval run DATASET.jsonl --agent A
            [--version V | --alias X] [--against V2] [--min-pass P]
            [--json FILE] [--junit FILE], eval show EVAL, eval ls,
            eval cancel EVAL…, eval dataset --from-runs --agent A
  approve   accept or reject a pending action: approve RUN ACTION [--reject --reason R]
  submit    submit a client tool's result: submit RUN REQUEST --result JSON|@file
  cancel    cancel a run: cancel RUN [--reason R]
  steer     add a user message to a run: steer RUN "message"
  interrupt interrupt a run: interrupt RUN [--action A] [--reason R] [--meta k=v]
  memories  an end user's long-term memories: memories ls [--subject S]
            [--limit N], memories rm ID [--subject S], memories rm --all
            --subject S (erase them all)
  schedules scheduled runs: schedules ls, schedules create --agent A
            (--cron EXPR | --at TIME) [--timezone TZ] (--input TEXT |
            --request FILE), schedules pause|resume|rm ID, schedules
            history ID (what each fire time started, or why not)
  login     save the API URL and token: login --url URL --token TOKEN
            (~/.config/baton/config.json, mode 0600)
  agents    agent versions (a token with agents:manage): agents publish FILE
            [--alias A [--weight W]], agents versions, agents diff V1 V2,
            agents alias NAME VERSION [--weight W] [--if-eval EVAL [--min-pass P]]

  Client commands take --url (BATON_URL, default ` + DefaultURL + `),
  --token (BATON_TOKEN) and --json; see docs/cli.md for exit codes.
`

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// exitError ends a command with a code, after its output.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Main runs a client command (args[0] is one of Commands) and returns
// the process's exit code. Errors are printed as one line, with the API's
// error code and message when the API answered.
func Main(ctx context.Context, args []string, env *Env) int {
	if env.HTTP == nil {
		env.HTTP = &http.Client{}
	}
	env.in = bufio.NewReader(env.Stdin)
	err := dispatch(ctx, args, env)
	name := args[0]
	if (name == "runs" || name == "agents" || name == "eval" || name == "memories" || name == "schedules") && len(args) > 1 {
		name += " " + args[1]
	}
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "baton %s: %v\n", name, err)
		return ExitUsage
	}
	fmt.Fprintf(env.Stderr, "baton %s: %v\n", name, err)
	return ExitError
}

// subcommands are the client commands that only group others, with
// theirs: `baton runs -h` lists them (each takes -h itself).
var subcommands = map[string]string{
	"runs":      "ls, show ID, events ID, fork ID --at SEQ, compare A B",
	"eval":      "run DATASET.jsonl --agent A, show EVAL, ls, cancel EVAL…, dataset --from-runs --agent A",
	"memories":  "ls [--subject S] [--limit N], rm ID [--subject S], rm --all --subject S",
	"schedules": "ls, create --agent A (--cron EXPR | --at TIME) (--input TEXT | --request FILE), pause ID, resume ID, rm ID, history ID",
}

func dispatch(ctx context.Context, args []string, env *Env) error {
	if subs, ok := subcommands[args[0]]; ok && len(args) > 1 && (args[1] == "-h" || args[1] == "--help" || args[1] == "help") {
		fmt.Fprintf(env.Stdout, "usage: baton %s <command> [flags]\ncommands: %s\neach takes -h for its flags; docs/cli.md has them all\n", args[0], subs)
		return nil
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], env)
	case "runs":
		if len(args) < 2 {
			return usageErr("want runs ls|show|events|fork|compare")
		}
		switch args[1] {
		case "ls", "list":
			return cmdRunsList(ctx, args[2:], env)
		case "show":
			return cmdRunsShow(ctx, args[2:], env)
		case "events":
			return cmdRunsEvents(ctx, args[2:], env)
		case "fork":
			return cmdRunsFork(ctx, args[2:], env)
		case "compare":
			return cmdRunsCompare(ctx, args[2:], env)
		}
		return usageErr("unknown runs command %q: want ls, show, events, fork or compare", args[1])
	case "eval":
		return cmdEval(ctx, args[1:], env)
	case "approve":
		return cmdApprove(ctx, args[1:], env)
	case "submit":
		return cmdSubmit(ctx, args[1:], env)
	case "cancel":
		return cmdCancel(ctx, args[1:], env)
	case "steer":
		return cmdSteer(ctx, args[1:], env)
	case "interrupt":
		return cmdInterrupt(ctx, args[1:], env)
	case "login":
		return cmdLogin(ctx, args[1:], env)
	case "agents":
		return cmdAgents(ctx, args[1:], env)
	case "memories":
		return cmdMemories(ctx, args[1:], env)
	case "schedules":
		return cmdSchedules(ctx, args[1:], env)
	}
	return usageErr("unknown command %q", args[0])
}

// cmdFlags are the flags every client command takes.
type cmdFlags struct {
	*flag.FlagSet
	url, token string
	json       bool
	name       string
	env        *Env
	usage      func()
}

func newFlags(name, args string, env *Env) *cmdFlags {
	f := newFlagsNoJSON(name, args, env)
	f.BoolVar(&f.json, "json", false, "print JSON for scripts instead of human output")
	return f
}

// newFlagsNoJSON is newFlags for a command whose --json is its own flag
// (baton eval run --json FILE).
func newFlagsNoJSON(name, args string, env *Env) *cmdFlags {
	f := &cmdFlags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), name: name, env: env}
	// The flag package reports a bad flag itself and prints the usage;
	// parse says it once instead, in one line.
	f.SetOutput(io.Discard)
	f.StringVar(&f.url, "url", "", "API URL (default: BATON_URL, the profile, or "+DefaultURL+")")
	f.StringVar(&f.token, "token", "", "API token (default: BATON_TOKEN or the profile)")
	f.usage = func() {
		fmt.Fprintf(env.Stderr, "usage: baton %s %s\n", name, args)
		f.SetOutput(env.Stderr)
		f.PrintDefaults()
		f.SetOutput(io.Discard)
	}
	f.Usage = func() {}
	return f
}

// flagError rewrites the flag package's error as one plain sentence.
func (f *cmdFlags) flagError(err error) error {
	msg := err.Error()
	if m := badValue.FindStringSubmatch(msg); m != nil {
		want := ""
		if fl := f.Lookup(m[2]); fl != nil {
			if g, ok := fl.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case int, int64, uint, uint64:
					want = " (want a whole number)"
				case bool:
					want = " (want true or false)"
				case time.Duration:
					want = ` (want a duration such as "30s")`
				}
			}
		}
		msg = fmt.Sprintf("--%s %q is not a valid value%s", m[2], m[1], want)
	} else if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = fmt.Sprintf("unknown flag --%s", name)
	}
	return usageErr("%s; see baton %s -h", msg, f.name)
}

var badValue = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([\w-]+): `)

// parse parses flags and positional arguments in any order and checks
// the positional count (max < 0: any number from min).
func (f *cmdFlags) parse(args []string, min, max int) ([]string, error) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.usage()
				return nil, err
			}
			return nil, f.flagError(err)
		}
		args = f.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			pos = append(pos, args[1:]...)
			break
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		f.usage()
		return nil, usageErr("wrong number of arguments")
	}
	return pos, nil
}

// parseClient parses the command line and builds the API client.
func (f *cmdFlags) parseClient(args []string, min, max int, env *Env) ([]string, *client, error) {
	pos, err := f.parse(args, min, max)
	if err != nil {
		return nil, nil, err
	}
	c, err := f.client(env)
	return pos, c, err
}

// client builds the API client from the flags, environment and profile.
func (f *cmdFlags) client(env *Env) (*client, error) {
	u, tok, err := env.resolve(f.url, f.token)
	if err != nil {
		return nil, err
	}
	return &client{base: u, token: tok, http: env.HTTP}, nil
}

func cmdLogin(ctx context.Context, args []string, env *Env) error {
	f := newFlags("login", "--url URL --token TOKEN", env)
	if _, err := f.parse(args, 0, 0); err != nil {
		return err
	}
	if f.url == "" || f.token == "" {
		return usageErr("login needs --url and --token")
	}
	u, tok, err := env.resolve(f.url, f.token)
	if err != nil {
		return err
	}
	// The token is checked before it is saved: the API must accept it.
	c := &client{base: u, token: tok, http: env.HTTP}
	var ae *APIError
	err = c.request(ctx, http.MethodGet, "/v1/runs", url.Values{"limit": {"1"}}, nil, &json.RawMessage{})
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
		fmt.Fprintf(env.Stderr, "note: the token is valid but may not list runs (%v)\n", err)
	case errors.As(err, &ae):
		return fmt.Errorf("%s refused the token, nothing saved: %w", u, err)
	case err != nil:
		return fmt.Errorf("nothing saved: %w", err)
	}
	path, err := env.writeProfile(profile{URL: strings.TrimRight(f.url, "/"), Token: f.token})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "saved %s (mode 0600)\n", path)
	if exp, ok := jwtExpiry(f.token); ok {
		fmt.Fprintf(env.Stdout, "the token is a JWT: it expires at %s; log in again with a new one then\n", exp.UTC().Format(time.RFC3339))
	}
	return nil
}

// jwtExpiry reads, unverified (the API verified it), the exp of a token
// shaped like a JWT.
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var c struct {
		Exp float64 `json:"exp"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Exp <= 0 {
		return time.Time{}, false
	}
	return time.Unix(int64(c.Exp), 0), true
}
