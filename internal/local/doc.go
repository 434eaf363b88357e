// Package local holds the driving adapters that run Baton's Lambda
// handlers on one machine, as baton dev and baton invoke do: Proxy, a
// local HTTP server's handler that translates requests into API Gateway
// proxy events and the handler's responses back; Poll, a queue poller that
// behaves like the Lambda SQS event source mapping; Serve, which runs
// both and a periodic sweep until its context ends; and Demo, a scripted
// agent run in process.
package local
