package faults

import (
	"encoding/json"
	"io"
	"time"
)

// watchEvent is one event of a watch stream as the API server sends it in JSON.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// key names the object an event is about; bookmarks and errors have none.
func (e watchEvent) key() string {
	if e.Type == "BOOKMARK" || e.Type == "ERROR" {
		return ""
	}
	var obj struct {
		Metadata struct{ Namespace, Name string } `json:"metadata"`
	}
	if json.Unmarshal(e.Object, &obj) != nil {
		return ""
	}
	return obj.Metadata.Namespace + "/" + obj.Metadata.Name
}

// delayEvents passes a watch stream's events on, holding them all until until (a stale view
// catching up), and from then on, when window is set, holding each window's events and sending
// only the newest of each object (coalescing).
func delayEvents(upstream io.ReadCloser, until time.Time, window time.Duration) io.ReadCloser {
	pr, pw := io.Pipe()
	events := make(chan watchEvent)
	go func() {
		defer close(events)
		dec := json.NewDecoder(upstream)
		for {
			var e watchEvent
			if dec.Decode(&e) != nil {
				return
			}
			select {
			case events <- e:
			case <-time.After(time.Hour):
				return
			}
		}
	}()
	go func() {
		err := (&eventBuffer{out: json.NewEncoder(pw), until: until, window: window}).run(events)
		_ = upstream.Close()
		_ = pw.CloseWithError(err)
		for range events { // let the decoder end
		}
	}()
	return pr
}

// eventBuffer holds events and sends them on as delayEvents says.
type eventBuffer struct {
	out     *json.Encoder
	until   time.Time
	window  time.Duration
	pending []watchEvent
	// since is when the oldest pending event came.
	since time.Time
}

func (b *eventBuffer) run(events <-chan watchEvent) error {
	for {
		var due <-chan time.Time
		if at, ok := b.flushAt(); ok {
			due = time.After(time.Until(at))
		}
		select {
		case e, ok := <-events:
			if !ok {
				// The stream ended (a watch's timeout): what it held still waits for the view to
				// catch up.
				time.Sleep(time.Until(b.until))
				return b.flush()
			}
			b.add(e)
			if _, hold := b.flushAt(); !hold {
				if err := b.flush(); err != nil {
					return err
				}
			}
		case <-due:
			if err := b.flush(); err != nil {
				return err
			}
		}
	}
}

// flushAt is when the pending events are due; ok is false when they are due now.
func (b *eventBuffer) flushAt() (time.Time, bool) {
	if time.Now().Before(b.until) {
		return b.until, true
	}
	if b.window > 0 && len(b.pending) > 0 {
		return b.since.Add(b.window), true
	}
	return time.Time{}, false
}

// add keeps e; within a coalescing window it replaces what is pending for the same object.
func (b *eventBuffer) add(e watchEvent) {
	if len(b.pending) == 0 {
		b.since = time.Now()
	}
	if b.window > 0 {
		if k := e.key(); k != "" {
			for i, old := range b.pending {
				if old.key() != k {
					continue
				}
				if old.Type == "ADDED" && e.Type == "MODIFIED" {
					e.Type = "ADDED" // the client has not seen it yet
				}
				b.pending = append(b.pending[:i], b.pending[i+1:]...)
				break
			}
		}
	}
	b.pending = append(b.pending, e)
}

func (b *eventBuffer) flush() error {
	for _, e := range b.pending {
		if err := b.out.Encode(e); err != nil {
			return err
		}
	}
	b.pending = b.pending[:0]
	return nil
}
