// Package providertest replays recorded provider HTTP traffic for the
// providers' tests. A fixture testdata/<case>.json lists the responses to
// serve, in order; the server listens on 127.0.0.1 and asserts that every
// request body it receives equals the golden request
// testdata/<case>.request.json, or the one an exchange names (compared as
// canonical JSON). Running the tests with -update rewrites the golden
// requests from what the provider sent. Suite runs the cases every
// provider shares on top of the replay: replies, errors, a key the server
// echoes, refused options. Streamed responses are recorded too: an
// exchange serves a testdata file as it is (a text/event-stream body) or
// AWS event stream frames encoded from their JSON, optionally cut short;
// Streams checks streamed calls (reply, deltas, and the buffered reply of
// the same completion), StreamedRequest compares a streamed golden request
// with the buffered one, Decoders drives a stream decoder over event
// sequences, and Split serves a stream in two halves (the second once the
// call has emitted a delta) or resets its connection. Nothing here
// touches the network beyond the loopback interface.
package providertest
