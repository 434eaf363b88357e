// Package wait holds the context-aware sleep and the polling loop the
// runner, the stores and the providers share: every wait in Baton ends
// when its context is done.
package wait
