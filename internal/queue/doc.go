// Package queue defines what the local event-source poller needs from a
// step queue: receive a batch, delete what was handled. Messages not
// deleted reappear after the visibility timeout and are dead-lettered
// after the queue's maximum receives, as with SQS.
package queue
