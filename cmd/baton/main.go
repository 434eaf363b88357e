package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	_ "time/tzdata" // schedules' time zones, on a machine without zoneinfo too

	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/cli"
)

const usage = `usage: baton <command> [flags]

commands:
  dev     run the whole system on one machine: the API behind a local HTTP
          server and the worker behind a queue poller, on embedded stores or
          on DynamoDB/SQS endpoints (see baton dev -h)
  token   store an API token's hash in a deployment's table (baton token put -h)
  invoke  run a Lambda handler locally on a sample event (baton invoke -h)
  mcp     list the tools an agent would see from its MCP servers (baton mcp ls)
  agents  check an agents file, printing every problem with its path
          (baton agents validate FILE)
  demo    run a scripted demo agent in process: a server tool call, a
          client-tool pause and resume, an approval, and the final result
          envelope

client commands (a client of the HTTP API of baton dev or a deployment):
` + cli.Usage

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "demo":
		err = runDemo(ctx, args[1:], stdout)
	case "dev":
		err = runDev(ctx, args[1:], stdout, stderr)
	case "token":
		err = runToken(ctx, args[1:], stdout, stderr)
	case "invoke":
		err = runInvoke(ctx, args[1:], stdout, stderr)
	case "mcp":
		err = runMCP(ctx, args[1:], stdout, stderr)
	case "agents":
		if len(args) > 1 && slices.Contains(cli.AgentsCommands, args[1]) {
			return cli.Main(ctx, args, cli.OSEnv())
		}
		return runAgents(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		if slices.Contains(cli.Commands, args[0]) {
			return cli.Main(ctx, args, cli.OSEnv())
		}
		fmt.Fprintf(stderr, "baton: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "baton %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func runDemo(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	quiet := fs.Bool("quiet", false, "print only the final result envelope")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return app.Demo(ctx, stdout, *quiet)
}
