// Package sse reads server-sent event streams (the text/event-stream
// format of the HTML standard): the events of Baton's stream route, for
// its clients and tests.
package sse

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// Event is one dispatched event. Comment lines (": keep-alive") are not
// events; Reader counts them.
type Event struct {
	// ID is the id: field ("" when the event has none), Event the event:
	// field ("" means "message"), Data the data: lines joined by "\n".
	ID, Event, Data string
	// Retry is the reconnection time the event's retry: field asks for,
	// in milliseconds (0 when it has none).
	Retry int
}

// Reader reads events from a stream.
type Reader struct {
	sc *bufio.Scanner
	// Comments counts the comment lines read so far.
	Comments int
}

// maxLine bounds one line of a stream (a data line carries a whole run
// view at the end of Baton's stream).
const maxLine = 16 << 20

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &Reader{sc: sc}
}

// Next returns the next event. At the end of the stream it returns
// io.EOF, or io.ErrUnexpectedEOF when the stream ends inside an event
// (its blank line never came); other errors are the underlying reader's.
func (r *Reader) Next() (Event, error) {
	var ev Event
	var data []string
	started := false
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if !started {
				continue
			}
			ev.Data = strings.Join(data, "\n")
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			r.Comments++
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Event = value
		case "data":
			data = append(data, value)
		case "retry":
			// Only digits count, as the standard says.
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 || strings.TrimLeft(value, "0123456789") != "" {
				continue
			}
			ev.Retry = n
		default:
			// Unknown fields are ignored, as the standard says.
			continue
		}
		started = true
	}
	if err := r.sc.Err(); err != nil {
		return Event{}, err
	}
	if started {
		return Event{}, io.ErrUnexpectedEOF
	}
	return Event{}, io.EOF
}

// ReadAll reads events until the end of the stream.
func (r *Reader) ReadAll() ([]Event, error) {
	var out []Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}
