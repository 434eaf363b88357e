package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/intake"
	"github.com/baton-agents/baton/internal/local"
	"github.com/baton-agents/baton/internal/memstore"
	"github.com/baton-agents/baton/internal/runspec"
	"github.com/baton-agents/baton/internal/sqsqueue"
)

// Intake is the intake queue: a standard SQS queue whose messages (POST
// /v1/runs bodies plus tenant and idempotency_key) start runs, and its
// dead-letter queue, to which the intake handler sends refused messages.
// On the embedded stores both are in memory and always there.
type Intake struct {
	// QueueURL (BATON_INTAKE_QUEUE_URL) is the intake queue, which a local
	// poller receives from; the intake Lambda needs only
	// DeadLetterURL (BATON_INTAKE_DLQ_URL), its event source mapping
	// receives for it.
	QueueURL, DeadLetterURL string
	// QueueName finds, or with Stores.CreateResources creates, the queue
	// QueueName and its dead-letter queue QueueName-dlq (baton dev).
	QueueName string
}

// DefaultIntakeQueueName is baton dev's intake queue.
const DefaultIntakeQueueName = "baton-intake"

// intakeInFlight is how long a message being started holds its
// idempotency key; the intake function's timeout stays under it (infra).
const intakeInFlight = 2 * time.Minute

func intakeFromEnv(get func(k, def string) string) Intake {
	return Intake{QueueURL: get("BATON_INTAKE_QUEUE_URL", ""), DeadLetterURL: get("BATON_INTAKE_DLQ_URL", "")}
}

// openIntake opens the intake queues (embedded, or SQS when configured)
// and builds the intake handler.
func (a *App) openIntake(ctx context.Context, st stores, clock core.Clock) error {
	c := a.Config.Intake
	switch {
	case a.Config.Stores.Memory:
		var now func() time.Time
		if clock != nil {
			now = clock.Now
		}
		dlq := memstore.NewMessageQueue(a.Config.Stores.Visibility, 1000, nil, now)
		a.IntakeDeadLetters, a.IntakeQueue = dlq, memstore.NewMessageQueue(a.Config.Stores.Visibility, a.Config.MaxReceives, dlq, now)
	case c.QueueName != "" && a.Config.Stores.CreateResources:
		var err error
		if c.QueueURL, c.DeadLetterURL, err = sqsqueue.CreateStandardQueues(ctx, st.sqs, c.QueueName, a.Config.Stores.Visibility, a.Config.MaxReceives); err != nil {
			return fmt.Errorf("create intake queues %s: %w", c.QueueName, err)
		}
		prev := a.cleanup
		a.cleanup = func(ctx context.Context) error {
			_, err1 := st.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(c.QueueURL)})
			_, err2 := st.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(c.DeadLetterURL)})
			var err0 error
			if prev != nil {
				err0 = prev(ctx)
			}
			return errors.Join(err0, err1, err2)
		}
	case c.QueueName != "":
		for _, u := range []struct {
			url  *string
			name string
		}{{&c.QueueURL, c.QueueName}, {&c.DeadLetterURL, c.QueueName + "-dlq"}} {
			out, err := st.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(u.name)})
			if err != nil {
				// A deployment without the intake runs without it.
				a.Log.Warn("no intake queue; intake disabled (pass --create-resources to create it)", "queue", u.name, "err", err)
				return nil
			}
			*u.url = aws.ToString(out.QueueUrl)
		}
	}
	if !a.Config.Stores.Memory {
		if c.QueueURL != "" {
			a.IntakeQueue = sqsqueue.NewStandard(st.sqs, c.QueueURL)
		}
		if c.DeadLetterURL != "" {
			a.IntakeDeadLetters = sqsqueue.NewStandard(st.sqs, c.DeadLetterURL)
		}
	}
	a.Config.Intake = c
	if a.IntakeDeadLetters == nil {
		return nil
	}
	a.Intake = &intake.Handler{Runner: a.Runner, Validator: runspec.Validator{Agents: a.Agents, Providers: a.Config.Providers},
		Idem: st.idem, DeadLetters: a.IntakeDeadLetters, Clock: clock, Log: a.Log, InFlightLease: intakeInFlight}
	return nil
}

// MustIntake returns the intake handler, exiting the process with a clear
// message when no intake dead-letter queue is configured (the intake
// Lambda's init failure).
func (a *App) MustIntake() *intake.Handler {
	if a.Intake == nil {
		fmt.Fprintln(os.Stderr, "baton: configuration error: BATON_INTAKE_DLQ_URL is required")
		os.Exit(1)
	}
	return a.Intake
}

// withIntake adds the intake poller, and the folder feed of
// o.IntakeDir, to baton dev's options when an intake queue is configured.
func (a *App) withIntake(o ServeOptions, lo local.Options) local.Options {
	if a.Intake == nil || a.IntakeQueue == nil {
		return lo
	}
	lo.Intake, lo.IntakeReceiver = a.Intake.Handle, a.IntakeQueue
	if o.IntakeDir != "" {
		lo.IntakeDir = local.IntakeDir{Dir: o.IntakeDir, Send: a.IntakeQueue.Send, Log: a.Log}
		if a.Config.Stores.Memory {
			lo.IntakeDir.Dead = a.IntakeDeadLetters
		}
	}
	return lo
}
