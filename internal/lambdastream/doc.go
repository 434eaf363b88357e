// Package lambdastream is a small client of the Lambda Runtime API that
// answers each invocation either buffered or as a streamed response, and
// the API Gateway REST adapter on top of it that the API Lambda runs.
//
// # Why not aws-lambda-go's lambda.Start
//
// aws-lambda-go v1.55.1 posts a handler's io.Reader response (such as
// events.APIGatewayProxyStreamingResponse, whose MarshalJSON fails so the
// io.Reader branch is taken — the JSON trap of aws-lambda-go issue #565 is
// avoided by that type, not by the runtime) with chunked transfer encoding,
// but it never sends the Lambda-Runtime-Function-Response-Mode: streaming
// header. The Runtime API documents that header (with Transfer-Encoding:
// chunked, and closing the connection afterwards) as what makes a response
// streamed; without it the response is a buffered one, delivered when it
// is complete and capped at 6 MB. lambda.Start also owns the one
// invocation loop of the process, so a handler cannot choose the response
// mode per request. This package speaks the Runtime API itself: GET
// /2018-06-01/runtime/invocation/next, then either POST …/{id}/response
// with the buffered JSON payload, or POST …/{id}/response with
// Lambda-Runtime-Function-Response-Mode: streaming, Transfer-Encoding:
// chunked, the Content-Type of the stream, and the
// Lambda-Runtime-Function-Error-Type and -Body trailers declared up front
// and set when the stream fails after it started; POST …/{id}/error reports
// a failure before anything was sent.
//
// # One function, two integrations
//
// API Gateway invokes the same function through two integrations: the
// ordinary buffered Lambda proxy integration (Invoke) for every route, and
// a STREAM integration (InvokeWithResponseStream) for GET
// /v1/runs/{run_id}/stream only. A function cannot tell from an
// invocation which API invoked it, so APIGateway decides by route: the
// stream route is always answered in API Gateway's streaming format (a
// JSON prelude {"statusCode":…,"headers":{…}}, eight NUL bytes, then the
// body as it is written) — also its error responses, such as a 401 — and
// every other route with the ordinary proxy JSON response, which
// InvokeWithResponseStream would deliver in one piece as well. Lambda
// returns a streamed response in full to a plain Invoke, so a deployment
// whose stream route is not on a STREAM integration (LocalStack predates
// API Gateway response streaming) sets APIGateway.IsStream to nil and
// serves the route buffered through Handle.
package lambdastream
