package pgwire

import (
	"net"
)

const (
	// inputChunkSize is the size of one read from the client.
	inputChunkSize = 8 << 10
	// inputChunks is how many chunks may wait for the connection goroutine: a
	// client that pipelines more than that is not read until it catches up.
	inputChunks = 4
)

// inputReader reads a client's bytes in a goroutine of its own, so that a
// client that goes away is noticed while its connection goroutine is busy
// running a query: onErr is called (and the query's context cancelled by it)
// as soon as the read fails, instead of when the query is over.
//
// Read is called only by the connection goroutine. The reader goroutine owns a
// chunk from the moment it takes it from free until it sends it on chunks; the
// connection goroutine owns it from then until it puts it back on free.
type inputReader struct {
	nc       net.Conn
	onErr    func(error)
	waitHook func() // Server.testHookWaitInput

	chunks chan []byte
	free   chan []byte
	stop   chan struct{} // closed by close: the reader goroutine must not block
	done   chan struct{} // closed when the reader goroutine has returned
	// err is the read error that ended the reader goroutine. It is written
	// before chunks is closed and read after.
	err error

	cur    []byte // the unread rest of curBuf
	curBuf []byte // the chunk being read by Read, nil if none
}

// startInput starts reading nc. onErr is called from the reader goroutine with
// the error that ends it (io.EOF when the client closed the connection).
func startInput(nc net.Conn, onErr func(error), waitHook func()) *inputReader {
	r := &inputReader{
		nc:       nc,
		onErr:    onErr,
		waitHook: waitHook,
		chunks:   make(chan []byte, inputChunks),
		free:     make(chan []byte, inputChunks+2),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go r.run()
	return r
}

func (r *inputReader) run() {
	defer close(r.done)
	defer close(r.chunks)
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		default:
			buf = make([]byte, inputChunkSize)
		}
		n, err := r.nc.Read(buf[:cap(buf)])
		if n > 0 {
			select {
			case r.chunks <- buf[:n]:
			case <-r.stop:
				return
			}
		}
		if err != nil {
			r.err = err
			r.onErr(err)
			return
		}
	}
}

// Read implements io.Reader for the connection goroutine. It returns the
// reader goroutine's error once every byte read before it has been consumed.
func (r *inputReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.curBuf != nil {
			select {
			case r.free <- r.curBuf:
			default:
			}
			r.curBuf = nil
		}
		if r.waitHook != nil && len(r.chunks) == 0 {
			r.waitHook()
		}
		buf, ok := <-r.chunks
		if !ok {
			return 0, r.err
		}
		r.curBuf, r.cur = buf, buf
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// close stops the reader goroutine and waits for it. The caller must first make
// its pending Read fail (by closing the connection or setting a read deadline).
func (r *inputReader) close() {
	close(r.stop)
	<-r.done
}
