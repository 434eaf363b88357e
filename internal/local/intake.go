package local

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/baton-agents/baton/core"
)

// IntakeDir is baton dev's folder feed of the intake queue (--intake-dir):
// each *.json file dropped into Dir is sent as one message to the intake
// queue and then moved to Dir/sent/; when Dead is set (the embedded
// stores, whose dead-letter queue nothing else can read), each dead
// letter is written to Dir/dead/<message id>.json as {"message_id",
// "attributes", "body"} and removed from the queue.
type IntakeDir struct {
	Dir  string
	Send func(ctx context.Context, body string, attrs map[string]string) error
	Dead core.StepReceiver
	Log  *slog.Logger
	// Every is how often the folder is scanned (default 250ms).
	Every time.Duration
}

// Run scans until ctx ends.
func (d IntakeDir) Run(ctx context.Context) {
	every := d.Every
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	for _, sub := range []string{"sent", "dead"} {
		if err := os.MkdirAll(filepath.Join(d.Dir, sub), 0o755); err != nil {
			d.Log.Warn("intake dir", "err", err)
			return
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		d.sendFiles(ctx)
		if d.Dead != nil {
			d.drainDead(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (d IntakeDir) sendFiles(ctx context.Context) {
	files, err := filepath.Glob(filepath.Join(d.Dir, "*.json"))
	if err != nil {
		return
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if err := d.Send(ctx, string(b), nil); err != nil {
			d.Log.Warn("intake dir: send", "file", f, "err", err)
			return
		}
		if err := os.Rename(f, filepath.Join(d.Dir, "sent", filepath.Base(f))); err != nil {
			d.Log.Warn("intake dir: move sent file", "file", f, "err", err)
		}
	}
}

func (d IntakeDir) drainDead(ctx context.Context) {
	ds, err := d.Dead.Receive(ctx, 10, 0)
	if err != nil {
		return
	}
	for _, m := range ds {
		b, _ := json.MarshalIndent(map[string]any{"message_id": m.MessageID, "attributes": m.Attributes, "body": string(m.Body)}, "", "  ")
		name := m.MessageID
		if src := m.Attributes["baton_source_message_id"]; src != "" {
			name = src
		}
		if err := os.WriteFile(filepath.Join(d.Dir, "dead", name+".json"), b, 0o644); err != nil {
			d.Log.Warn("intake dir: write dead letter", "err", err)
			continue
		}
		_ = d.Dead.Delete(context.WithoutCancel(ctx), m.ReceiptHandle)
	}
}
