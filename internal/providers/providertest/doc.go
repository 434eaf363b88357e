// Package providertest replays recorded provider HTTP traffic for the
// providers' tests. A fixture testdata/<case>.json lists the responses to
// serve, in order; the server listens on 127.0.0.1 and asserts that every
// request body it receives equals the golden request
// testdata/<case>.request.json, or the one an exchange names (compared as
// canonical JSON). Running the tests with -update rewrites the golden
// requests from what the provider sent. Suite runs the cases every
// provider shares on top of the replay: replies, errors, a key the server
// echoes, refused options. Nothing here touches the network beyond the
// loopback interface.
package providertest
