package main

import (
	"context"
	"fmt"
	"os"

	"github.com/baton-agents/baton/internal/app"
)

func main() {
	a := app.MustBuild(context.Background(), false)
	if err := a.StartAPI(); err != nil {
		fmt.Fprintln(os.Stderr, "baton:", err)
		os.Exit(1)
	}
}
