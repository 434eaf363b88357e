package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/internal/app"
)

// SampleToken is the token the sample API events in events/ carry;
// baton invoke stores it for tenant "sample" unless BATON_DEV_TOKENS is
// set.
const SampleToken = "sample-token-0000001"

// runInvoke runs one function's handler on a sample event, the way the
// Lambda runtime would, against baton dev's embedded stores or the
// configured endpoints, and prints the response.
func runInvoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("invoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fn := fs.String("fn", "", "function: api, worker or sweeper")
	event := fs.String("event", "", "event JSON file (API Gateway proxy request for api, SQS batch for worker)")
	var rest []string
	// The remaining flags are baton dev's (stores, agents, endpoints).
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--fn", "-fn", "--event", "-event":
			if i+1 < len(args) {
				if err := fs.Parse(args[i : i+2]); err != nil {
					return err
				}
				i++
			}
		default:
			rest = append(rest, args[i])
		}
	}
	if *fn == "" || (*event == "" && *fn != "sweeper") {
		return fmt.Errorf("usage: baton invoke --fn api|worker|sweeper --event FILE [baton dev flags: --agents, --dynamodb-endpoint, --sqs-endpoint, --table, --queue, --create-resources]")
	}
	o, err := parseDevFlags(rest, stderr)
	if err != nil {
		return err
	}
	a, _, err := buildDev(ctx, o, stderr, []app.Token{{Token: SampleToken, Tenant: "sample"}})
	if err != nil {
		return err
	}
	var raw []byte
	if *event != "" {
		if raw, err = os.ReadFile(*event); err != nil {
			return err
		}
	}
	var out any
	switch *fn {
	case "api":
		var req events.APIGatewayProxyRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return fmt.Errorf("%s is not an API Gateway proxy request: %w", *event, err)
		}
		out, _ = a.API.Handle(ctx, req)
	case "worker":
		var ev events.SQSEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("%s is not an SQS event: %w", *event, err)
		}
		out, _ = a.Worker.Handle(ctx, ev)
	case "sweeper":
		n, err := a.Sweep(ctx, 500)
		if err != nil {
			return err
		}
		out = map[string]int{"runs_checked": n}
	default:
		return fmt.Errorf("unknown function %q (want api, worker or sweeper)", *fn)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
