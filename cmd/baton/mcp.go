package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/features"
)

// runMCP lists the tools an agent would see from its MCP servers:
//
//	baton mcp ls --agents FILE --agent SLUG [--tenant T] [--region R]
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "ls" {
		return fmt.Errorf("usage: baton mcp ls --agents FILE --agent SLUG [--tenant TENANT] [--region R]")
	}
	var cfg app.Config
	fs := flag.NewFlagSet("mcp ls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Agents.File, "agents", "", "agents file")
	agent := fs.String("agent", "", "agent slug")
	tenant := fs.String("tenant", "", "tenant whose credentials to use, for headers whose secret names {tenant}")
	fs.StringVar(&cfg.Region, "region", firstEnv("AWS_REGION", "AWS_DEFAULT_REGION"), "AWS region (secrets in SSM or Secrets Manager)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if cfg.Agents.File == "" || *agent == "" {
		return fmt.Errorf("--agents and --agent are required")
	}
	return features.ListMCPTools(ctx, cfg, *agent, *tenant, stdout)
}
