// Package notify holds the publishers of run notifications
// (core.NotificationPublisher): EventBridge, which puts each notification
// on an event bus as an event with source "baton", the notification's
// detail type and its detail; Poster, which POSTs the entry EventBridge
// would get ({"source", "detail-type", "detail"}) to a URL (baton dev's
// --notify-url); and Logger, which logs it (baton dev without a URL).
// The durable runner stores each notification in the commit of its
// transition and calls a publisher after the commit, and again from the
// sweeper until a publish succeeds, so delivery is at least once and a
// receiver deduplicates by the detail's event_id.
package notify
