package app

import (
	"context"
	"io"

	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/local"
)

// ServeOptions are baton dev's serving settings.
type ServeOptions struct {
	Addr    string
	Pollers int
	// IntakeDir feeds the intake queue from a folder (baton dev
	// --intake-dir; see local.IntakeDir).
	IntakeDir string
	// Ready is called with the server's base URL once it listens.
	Ready func(baseURL string)
}

// Serve runs the whole system on one machine until ctx ends: the API
// behind a local HTTP server that translates requests to API Gateway
// proxy events, pollers that deliver the step queue's messages to the
// worker as the Lambda event source mapping does, and the sweeper every
// two seconds.
func (a *App) Serve(ctx context.Context, o ServeOptions) error {
	return local.Serve(ctx, a.withIntake(o, local.Options{
		Addr: o.Addr, API: a.API.Handle, MaxBody: a.API.Config.MaxBodyBytes,
		Streams: local.Streams{Match: httpapi.IsStream, Handler: a.API.Stream},
		Worker:  a.Worker.Handle, Receiver: a.Steps, Pollers: o.Pollers,
		Sweep: func(ctx context.Context) error { _, err := a.Runner.Sweep(ctx, 100); return err },
		Log:   a.Log, Ready: o.Ready,
	}))
}

// Demo runs the scripted demo agent in process and writes its result
// envelope to w; unless quiet, it narrates the run first.
func Demo(ctx context.Context, w io.Writer, quiet bool) error { return local.Demo(ctx, w, quiet) }
