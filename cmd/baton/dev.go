package main

import (
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/memstore"
	"github.com/baton-agents/baton/internal/worker"
)

//go:embed agents.demo.json
var demoAgents []byte

type devOptions struct {
	addr            string
	agentsFile      string
	ddbEndpoint     string
	sqsEndpoint     string
	region          string
	table           string
	queueName       string
	createResources bool
	visibility      time.Duration
	pollers         int
	logLevel        string
}

// devStores is what baton dev runs on: embedded or external.
type devStores struct {
	store    durable.Store
	tokens   core.TokenStore
	idem     core.IdempotencyStore
	queue    core.StepQueue
	receiver core.StepReceiver
	describe string
}

func parseDevFlags(args []string, stderr io.Writer) (devOptions, error) {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := devOptions{}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to serve the API on")
	fs.StringVar(&o.agentsFile, "agents", "", "agents file (default: the bundled demo agent)")
	fs.StringVar(&o.ddbEndpoint, "dynamodb-endpoint", firstEnv("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"), "DynamoDB endpoint (DynamoDB Local, LocalStack, AWS); empty: embedded store")
	fs.StringVar(&o.sqsEndpoint, "sqs-endpoint", firstEnv("AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL"), "SQS endpoint (fauxqs, LocalStack, AWS); empty: embedded queue")
	fs.StringVar(&o.region, "region", firstEnv("AWS_REGION", "AWS_DEFAULT_REGION"), "AWS region for external stores (default us-east-1)")
	fs.StringVar(&o.table, "table", "baton", "DynamoDB table name")
	fs.StringVar(&o.queueName, "queue", "baton-steps", "SQS FIFO queue base name (.fifo is added)")
	fs.BoolVar(&o.createResources, "create-resources", false, "create the table and queues when missing")
	fs.DurationVar(&o.visibility, "visibility-timeout", 20*time.Second, "step visibility timeout: an interrupted step is retried after it")
	fs.IntVar(&o.pollers, "pollers", 4, "concurrent queue pollers")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if (o.ddbEndpoint == "") != (o.sqsEndpoint == "") {
		return o, fmt.Errorf("set both --dynamodb-endpoint and --sqs-endpoint, or neither (embedded stores)")
	}
	if o.region == "" {
		o.region = "us-east-1"
	}
	if o.visibility < time.Second {
		return o, fmt.Errorf("--visibility-timeout must be at least 1s")
	}
	return o, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// parseDevTokens reads BATON_DEV_TOKENS=tenant=token,…
func parseDevTokens(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		tenant, token, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(tenant) == "" || len(strings.TrimSpace(token)) < 8 {
			return nil, fmt.Errorf("BATON_DEV_TOKENS: want tenant=token pairs (tokens of 8 or more characters), got %q", part)
		}
		out[strings.TrimSpace(token)] = strings.TrimSpace(tenant)
	}
	return out, nil
}

// runtime is what baton dev and baton invoke run: the real handlers on
// embedded or external stores.
type runtime struct {
	eng    *durable.Runner
	api    *httpapi.API
	worker *worker.Worker
	stores devStores
	reg    *agents.Registry
	tokens map[string]string // token → tenant
	log    *slog.Logger
}

func buildRuntime(ctx context.Context, o devOptions, stderr io.Writer, defaultTokens map[string]string) (*runtime, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	var reg *agents.Registry
	var err error
	if o.agentsFile != "" {
		reg, err = agents.LoadFile(o.agentsFile)
	} else {
		reg, err = agents.Parse(demoAgents)
	}
	if err != nil {
		return nil, err
	}
	router, err := executors.NewRouter(reg, executors.NewGoRegistry(), toolFactories())
	if err != nil {
		return nil, err
	}
	stores, err := openStores(ctx, o)
	if err != nil {
		return nil, err
	}
	tokens := defaultTokens
	if env := os.Getenv("BATON_DEV_TOKENS"); env != "" {
		if tokens, err = parseDevTokens(env); err != nil {
			return nil, err
		}
	}
	for token, tenant := range tokens {
		if err := stores.tokens.PutToken(ctx, httpapi.HashToken(token), core.Token{Tenant: tenant, Scopes: httpapi.AllScopes, Label: tenant}); err != nil {
			return nil, fmt.Errorf("store dev token: %w", err)
		}
	}
	models, enabled, err := devModels(ctx, log)
	if err != nil {
		return nil, err
	}
	clock := core.SystemClock{}
	// The intent lease outlasts the default 30 s tool timeout, so a slow
	// tool is never taken for a crashed one.
	eng := durable.New(durable.Options{Store: stores.store, Queue: stores.queue, Agents: reg, Model: models, Tools: router, Clock: clock, Log: log,
		Limits: durable.Limits{StallAfter: 2 * o.visibility, IntentLease: o.visibility + 30*time.Second, MaxReceives: 5}})
	api := httpapi.New(eng, stores.tokens, stores.idem, clock, log, httpapi.Config{Providers: enabled})
	return &runtime{eng: eng, api: api, worker: &worker.Worker{Runner: eng, Log: log}, stores: stores, reg: reg, tokens: tokens, log: log}, nil
}

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseDevFlags(args, stderr)
	if err != nil {
		return err
	}
	rt, err := buildRuntime(ctx, o, stderr, map[string]string{core.RandomIDs{}.NewID("dev"): "dev"})
	if err != nil {
		return err
	}
	eng, api, w, stores, reg, tokens, log := rt.eng, rt.api, rt.worker, rt.stores, rt.reg, rt.tokens, rt.log
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	srv := &http.Server{Handler: proxyHandler(api), ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < o.pollers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); poll(ctx, stores.receiver, w, log) }()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := eng.Sweep(ctx, 100); err != nil && ctx.Err() == nil {
					log.Warn("sweep", "err", err)
				}
			}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "baton dev: serving %s on %s (%s)\n", strings.Join(reg.Slugs(), ", "), base, stores.describe)
	for token, tenant := range tokens {
		if os.Getenv("BATON_DEV_TOKENS") == "" {
			fmt.Fprintf(stdout, "baton dev: token for tenant %s: %s\n", tenant, token)
		}
	}
	fmt.Fprintf(stdout, `baton dev: try
  curl -s -X POST %s/v1/runs -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d '{"agent":"demo","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"Hello!"}]}}'
`, base)
	fmt.Fprintln(stdout, "baton dev: ready")

	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	shutdownCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	_ = srv.Shutdown(shutdownCtx)
	cancel()
	wg.Wait()
	fmt.Fprintln(stdout, "baton dev: stopped")
	return nil
}

func openStores(ctx context.Context, o devOptions) (devStores, error) {
	if o.ddbEndpoint == "" {
		s := memstore.New()
		q := memstore.NewStepQueue(o.visibility, 5, nil)
		return devStores{store: s, tokens: s, idem: s, queue: q, receiver: q, describe: "embedded in-memory stores"}, nil
	}
	return openExternal(ctx, o)
}

// proxyHandler translates HTTP requests into API Gateway proxy events and
// the handler's responses back, as API Gateway does.
func proxyHandler(api *httpapi.API) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, int64(api.Config.MaxBodyBytes)+1))
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		req := events.APIGatewayProxyRequest{
			Resource: "/v1/{proxy+}", Path: r.URL.Path, HTTPMethod: r.Method,
			Headers: map[string]string{}, MultiValueHeaders: map[string][]string{},
			QueryStringParameters: map[string]string{}, MultiValueQueryStringParameters: map[string][]string{},
			PathParameters: map[string]string{"proxy": strings.TrimPrefix(r.URL.Path, "/v1/")},
			RequestContext: events.APIGatewayProxyRequestContext{RequestID: core.RandomIDs{}.NewID("req"), Stage: "dev", HTTPMethod: r.Method, Path: r.URL.Path},
		}
		for k, vs := range r.Header {
			req.Headers[k] = vs[0]
			req.MultiValueHeaders[k] = vs
		}
		for k, vs := range r.URL.Query() {
			req.QueryStringParameters[k] = vs[0]
			req.MultiValueQueryStringParameters[k] = vs
		}
		if utf8.Valid(body) {
			req.Body = string(body)
		} else {
			req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
		resp, _ := api.Handle(r.Context(), req)
		for k, v := range resp.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.WriteString(w, resp.Body)
	})
}

// poll behaves like the Lambda SQS event source mapping: it receives
// batches, invokes the worker, and deletes the messages that did not
// fail; failed ones reappear after the visibility timeout and go to the
// dead-letter queue after the maximum receives.
func poll(ctx context.Context, rcv core.StepReceiver, w *worker.Worker, log *slog.Logger) {
	for ctx.Err() == nil {
		ds, err := rcv.Receive(ctx, 10, time.Second)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("receive steps", "err", err)
				time.Sleep(time.Second)
			}
			continue
		}
		if len(ds) == 0 {
			continue
		}
		ev := events.SQSEvent{Records: make([]events.SQSMessage, len(ds))}
		byID := map[string]core.ReceivedMessage{}
		for i, d := range ds {
			ev.Records[i] = events.SQSMessage{MessageId: d.MessageID, ReceiptHandle: d.ReceiptHandle, Body: string(d.Body),
				Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(d.ReceiveCount), "MessageGroupId": d.Group, "MessageDeduplicationId": d.DedupID}}
			byID[d.MessageID] = d
		}
		resp, _ := w.Handle(ctx, ev)
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for id, d := range byID {
			if !failed[id] {
				if err := rcv.Delete(context.WithoutCancel(ctx), d.ReceiptHandle); err != nil {
					log.Warn("delete step message", "message_id", id, "err", err)
				}
			}
		}
	}
}
