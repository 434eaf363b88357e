package providers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one server-sent event: its event name (empty when the stream
// names none, as OpenAI's does) and its data, the event's data lines
// joined by "\n".
type Event struct {
	Name string
	Data []byte
}

// ErrStreamTooLarge is returned by ReadSSE for a stream longer than
// MaxResponseBytes: the cap a buffered response is read up to.
var ErrStreamTooLarge = fmt.Errorf("the response stream is longer than %d bytes", MaxResponseBytes)

// ReadSSE reads server-sent events (text/event-stream) from r and calls
// fn with each, in order, as soon as its terminating blank line is read.
// It returns nil when r ends, the first error fn returns, or the error
// reading r failed with (ErrStreamTooLarge past MaxResponseBytes).
//
// It follows the parsing rules of the HTML standard for the fields
// providers use: a line "field: value" (one space after the colon
// dropped), "data" lines accumulated, "event" naming the event, lines
// starting with ':' ignored as comments, other fields (id, retry)
// ignored, and an event whose data is empty not dispatched. Lines end
// with "\n" or "\r\n". An event cut off by the end of r (no blank line
// after it) is not dispatched: callers detect a truncated stream by the
// end event they did not see.
func ReadSSE(r io.Reader, fn func(Event) error) error {
	sc := bufio.NewScanner(&capReader{r: r, left: MaxResponseBytes + 1})
	sc.Buffer(make([]byte, 0, 64<<10), MaxResponseBytes)
	var name string
	var data []byte
	var hasData bool
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if hasData {
				if err := fn(Event{Name: name, Data: data}); err != nil {
					return err
				}
			}
			name, data, hasData = "", nil, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return ErrStreamTooLarge
		}
		return err
	}
	return nil
}

// capReader fails with ErrStreamTooLarge once more than MaxResponseBytes
// have been read; left starts one above the cap.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left <= 0 {
		return n, ErrStreamTooLarge
	}
	return n, err
}
