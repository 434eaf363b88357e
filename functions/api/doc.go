// Command api is the API Lambda: API Gateway REST proxy events in, run
// views and errors out (DESIGN.md §2).
//
// It is app.MustBuild (configuration from the environment, no tool
// execution) and App.StartAPI, which runs the invocation loop of package
// lambdastream instead of aws-lambda-go's lambda.Start: that one never
// sends Lambda-Runtime-Function-Response-Mode: streaming, which the
// Runtime API needs for a streamed response.
//
// One function serves two API Gateway integrations. GET
// /v1/runs/{run_id}/stream is on a STREAM integration (API Gateway calls
// InvokeWithResponseStream): the function answers it as a response
// stream in API Gateway's format — a JSON prelude with the status and
// headers, eight NUL bytes, then the server-sent events as they are
// committed — and its errors (401, 404, …) in the same format. Every
// other route is on the ordinary buffered proxy integration (Invoke, 29
// s) and gets the ordinary proxy JSON response. An invocation does not
// say which API invoked it, so the function decides by route; with
// BATON_STREAM_TRANSFER=BUFFERED (a stack whose stream route is buffered,
// such as one on LocalStack) the stream route is served buffered too, in
// 25 s windows. The function's timeout is 15 minutes, API Gateway's cap
// on a stream; a stream ends 10 s before the invocation's deadline (or
// after 15 minutes) and the client reconnects with Last-Event-ID, while a
// buffered route gets a context that ends after API Gateway's 29 s.
package main
