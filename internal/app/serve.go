package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

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
	// IAMKeys are the access keys whose SigV4 requests baton dev accepts
	// under /iam/, standing in for IAM (baton dev --iam-key).
	IAMKeys []IAMKey
	// Clock is baton dev's controllable clock (--clock-offset), served
	// at /_dev/clock; nil: the wall clock.
	Clock *DevClock
}

// DevClock is baton dev's controllable clock (local.DevClock).
type DevClock = local.DevClock

// NewDevClock starts a controllable clock offset from the wall clock.
func NewDevClock(offset time.Duration) *DevClock { return local.NewDevClock(offset) }

// IAMKey is an access key of baton dev's stand-in for IAM and the
// principal it belongs to.
type IAMKey struct {
	AccessKeyID, Secret, ARN string
}

// ParseIAMKeys reads ACCESS_KEY_ID:SECRET=PRINCIPAL_ARN,… (baton dev
// --iam-key, BATON_DEV_IAM_KEYS).
func ParseIAMKeys(s string) ([]IAMKey, error) {
	var out []IAMKey
	for _, part := range List(s) {
		cred, arn, ok := strings.Cut(part, "=")
		id, secret, ok2 := strings.Cut(cred, ":")
		if !ok || !ok2 || id == "" || secret == "" || !strings.HasPrefix(arn, "arn:") {
			return nil, fmt.Errorf("want ACCESS_KEY_ID:SECRET=PRINCIPAL_ARN, got %q", part)
		}
		out = append(out, IAMKey{AccessKeyID: id, Secret: secret, ARN: arn})
	}
	return out, nil
}

// Serve runs the whole system on one machine until ctx ends: the API
// behind a local HTTP server that translates requests to API Gateway
// proxy events, pollers that deliver the step queue's messages to the
// worker as the Lambda event source mapping does, and the sweeper every
// two seconds.
func (a *App) Serve(ctx context.Context, o ServeOptions) error {
	var iam *local.SigV4
	if len(o.IAMKeys) > 0 {
		iam = &local.SigV4{Keys: map[string]local.IAMKey{}, Region: a.Config.Region}
		for _, k := range o.IAMKeys {
			iam.Keys[k.AccessKeyID] = local.IAMKey{Secret: k.Secret, ARN: k.ARN}
		}
	}
	return local.Serve(ctx, a.withIntake(o, local.Options{
		Addr: o.Addr, API: a.API.Handle, MaxBody: a.API.Config.MaxBodyBytes, IAM: iam,
		Streams: local.Streams{Match: httpapi.IsStream, Handler: a.API.Stream},
		Worker:  a.Worker.Handle, Receiver: a.Steps, Pollers: o.Pollers,
		Sweep: func(ctx context.Context) error { _, err := a.Runner.Sweep(ctx, 100); return err },
		Log:   a.Log, Ready: o.Ready, Clock: o.Clock,
		Scheduler: func(ctx context.Context) { a.Schedules.Loop(ctx, time.Second) },
	}))
}

// Demo runs the scripted demo agent in process and writes its result
// envelope to w; unless quiet, it narrates the run first.
func Demo(ctx context.Context, w io.Writer, quiet bool) error { return local.Demo(ctx, w, quiet) }
