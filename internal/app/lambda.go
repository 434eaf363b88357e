package app

import (
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/lambdastream"
)

// StartAPI runs the API Lambda's invocation loop (package lambdastream)
// on the Runtime API of AWS_LAMBDA_RUNTIME_API: API Gateway REST proxy
// events in; GET /v1/runs/{run_id}/stream answered as a response stream
// in API Gateway's format (unless Config.StreamTransfer is BUFFERED, when
// Handle serves it in 25 s windows), every other route with the buffered
// proxy response. A stream ends 10 s before the invocation's deadline at
// the latest, so the function's timeout bounds it cleanly. StartAPI
// returns only when the Runtime API fails or a handler panicked.
func (a *App) StartAPI() error { return lambdastream.Start(a.apiLambda().Invoke, a.Log) }

func (a *App) apiLambda() lambdastream.APIGateway {
	g := lambdastream.APIGateway{Handle: a.API.Handle, Stream: a.API.Stream, IsStream: httpapi.IsStream, RoutePath: httpapi.RoutePath}
	if a.Config.StreamTransfer == StreamTransferBuffered {
		g.IsStream = nil
	}
	return g
}
