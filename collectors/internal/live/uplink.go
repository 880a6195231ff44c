package live

// uplink.go owns the websocket to the backend (wire.schema.json): hello -> welcome
// (last committed seq), then batch header + one binary Arrow IPC frame per batch, acks
// and rejects back, heartbeats both ways. It reconnects with capped exponential backoff
// and resends every unacknowledged batch after the welcome's last_seq. Finish waits for
// the outbox to empty and closes with status 1000 "end" (the explicit end of the run).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coder/websocket"

	"placemap/collectors/internal/schema"
)

// ErrFatal wraps a backend answer that reconnecting cannot fix (bad token, ended session).
var ErrFatal = errors.New("live: the backend refused the collector")

// Heartbeat is the interval of heartbeats; a connection silent for 3 of them is dead.
const Heartbeat = 2 * time.Second

// Uplink sends an Outbox's batches to a backend.
type Uplink struct {
	URL    string
	Hello  schema.Hello
	Out    *Outbox
	Log    func(format string, args ...any)
	MaxGap time.Duration // backoff cap

	mu          sync.Mutex
	recordingID string
	finishing   bool
	connected   bool
	Reconnects  int
}

// RecordingID is the backend's recording for this session ("" before the first welcome).
func (u *Uplink) RecordingID() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.recordingID
}

// Finish asks Run to return once every batch is acknowledged.
func (u *Uplink) Finish() {
	u.mu.Lock()
	u.finishing = true
	u.mu.Unlock()
	select {
	case u.Out.notify <- struct{}{}:
	default:
	}
}

func (u *Uplink) isFinishing() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.finishing
}

// Run connects and sends until ctx ends (returns ctx's error) or, after Finish, the
// outbox is empty (returns nil). A fatal backend answer returns an ErrFatal error.
func (u *Uplink) Run(ctx context.Context) error {
	backoff := 100 * time.Millisecond
	fails := 0
	maxGap := u.MaxGap
	if maxGap == 0 {
		maxGap = 5 * time.Second
	}
	for first := true; ; first = false {
		if !first {
			u.Reconnects++
		}
		done, err := u.session(ctx)
		if done {
			return nil
		}
		if errors.Is(err, ErrFatal) || ctx.Err() != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		fails++
		if u.Log != nil && fails&(fails-1) == 0 { // 1st, 2nd, 4th, 8th... failure in a row
			u.Log("backend connection: %v (retrying with backoff, %d batches waiting)", err, u.Out.Len())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxGap)
		if u.connectedOnce() {
			backoff, fails = 100*time.Millisecond, 0
		}
	}
}

func (u *Uplink) connectedOnce() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.connected
	u.connected = false
	return c
}

func typeOf(b []byte) string {
	var t struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(b, &t)
	return t.Type
}

func wireErr(b []byte) error {
	var e schema.WireError
	_ = json.Unmarshal(b, &e)
	return fmt.Errorf("%w: %s: %s", ErrFatal, e.Code, e.Message)
}

// session runs one connection; done reports a finished run.
func (u *Uplink) session(ctx context.Context) (done bool, err error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	c, _, err := websocket.Dial(dctx, u.URL, nil)
	cancel()
	if err != nil {
		return false, err
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	hello := u.Hello
	hello.Type = "hello"
	if err := u.writeJSON(ctx, c, hello); err != nil {
		return false, err
	}
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	_, msg, err := c.Read(rctx)
	cancel()
	if err != nil {
		return false, fmt.Errorf("waiting for welcome: %w", err)
	}
	switch typeOf(msg) {
	case "welcome":
	case "error":
		return false, wireErr(msg)
	default:
		return false, fmt.Errorf("expected welcome, got %q", msg)
	}
	var w schema.Welcome
	if err := json.Unmarshal(msg, &w); err != nil {
		return false, err
	}
	u.mu.Lock()
	if u.recordingID != "" && u.recordingID != w.RecordingID {
		u.mu.Unlock()
		return false, fmt.Errorf("%w: the session moved from recording %s to %s", ErrFatal, u.recordingID, w.RecordingID)
	}
	u.recordingID = w.RecordingID
	u.connected = true
	u.mu.Unlock()
	u.Out.AckThrough(w.LastSeq)

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	errc := make(chan error, 2)
	lastHeard := make(chan struct{}, 1)
	go func() { // receiver: acks, rejects, heartbeats, errors
		for {
			_, msg, err := c.Read(sctx)
			if err != nil {
				errc <- err
				return
			}
			select {
			case lastHeard <- struct{}{}:
			default:
			}
			switch typeOf(msg) {
			case "ack":
				var a schema.Ack
				if json.Unmarshal(msg, &a) == nil {
					u.Out.Remove(a.Seq, "")
				}
			case "reject":
				var r schema.Reject
				if json.Unmarshal(msg, &r) == nil {
					u.Out.Remove(r.Seq, r.Reason)
					if u.Log != nil {
						u.Log("backend rejected batch %d: %s", r.Seq, r.Reason)
					}
				}
			case "error":
				errc <- wireErr(msg)
				return
			}
			select {
			case u.Out.notify <- struct{}{}:
			default:
			}
		}
	}()
	sent := w.LastSeq
	hb := time.NewTicker(Heartbeat)
	defer hb.Stop()
	heard := time.Now()
	for {
		// Send everything queued after what this connection has sent.
		for {
			b, err := u.Out.After(sent)
			if err != nil {
				return false, err
			}
			if b == nil {
				break
			}
			if err := u.writeJSON(ctx, c, schema.BatchHeader{Type: "batch", Seq: b.Seq, Rows: b.Rows, Bytes: len(b.Data)}); err != nil {
				return false, err
			}
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err = c.Write(wctx, websocket.MessageBinary, b.Data)
			cancel()
			if err != nil {
				return false, err
			}
			u.Out.timing.Sent(b.Seq)
			sent = b.Seq
		}
		if u.isFinishing() && u.Out.Len() == 0 {
			_ = c.Close(websocket.StatusNormalClosure, "end")
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case err := <-errc:
			if errors.Is(err, io.EOF) {
				err = errors.New("the backend closed the connection")
			}
			return false, err
		case <-u.Out.notify:
		case <-lastHeard:
			heard = time.Now()
		case <-hb.C:
			if time.Since(heard) > 3*Heartbeat+5*time.Second {
				return false, errors.New("the backend stopped answering")
			}
			if err := u.writeJSON(ctx, c, schema.Heartbeat{Type: "heartbeat", TsNS: int(MonoNow())}); err != nil {
				return false, err
			}
		}
	}
}

func (u *Uplink) writeJSON(ctx context.Context, c *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.Write(wctx, websocket.MessageText, b)
}
