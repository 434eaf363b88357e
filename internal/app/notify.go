package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/a2aserver"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/notify"
)

// Notify says where run notifications go; with none of its fields set,
// runs publish none (and store no outbox records).
type Notify struct {
	// EventBus is the EventBridge bus the deployed functions put them on
	// (BATON_EVENT_BUS, default "default").
	EventBus string
	// URL receives each one as a POST of the EventBridge entry (baton
	// dev --notify-url); it wins over EventBus.
	URL string
	// Log logs them (baton dev without --notify-url).
	Log bool
}

// notifier is the publisher of c.
func (c Notify) notifier(load awsenv.Loader, log *slog.Logger) core.NotificationPublisher {
	switch {
	case c.URL != "":
		return &notify.Poster{URL: c.URL}
	case c.EventBus != "":
		return notify.NewEventBridge(&lazyEvents{load: load}, c.EventBus)
	case c.Log:
		return notify.Logger{Log: log}
	}
	return nil
}

// lazyEvents makes the EventBridge client once, on the first publish,
// from the process's one AWS configuration.
type lazyEvents struct {
	load awsenv.Loader
	mu   sync.Mutex
	c    *awsenv.JSONClient
}

func (l *lazyEvents) Call(ctx context.Context, op string, in, out any) error {
	l.mu.Lock()
	if l.c == nil {
		cfg, err := l.load(ctx)
		if err != nil {
			l.mu.Unlock()
			return err
		}
		l.c = awsenv.EventBridge(cfg)
	}
	c := l.c
	l.mu.Unlock()
	return c.Call(ctx, op, in, out)
}

// callbackSender is the sender of the agents' callbacks (nil when no
// agent has one); their secrets are resolved now.
func callbackSender(ctx context.Context, reg *agents.Registry, remote *executors.Remote) (durable.CallbackSender, error) {
	signers := reg.CallbackSigners()
	if len(signers) == 0 {
		return nil, nil
	}
	return notify.NewWebhooks(ctx, remote, signers, map[string]notify.Format{core.CallbackFormatA2A: a2aserver.PushBody})
}
