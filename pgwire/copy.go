package pgwire

import (
	"io"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/sqlerr"
)

// Copier is COPY's sub-protocol. The ResultWriter a session gets from Query
// and Portal.Run implements it; a session running COPY ... FROM STDIN or TO
// STDOUT type-asserts it. binary selects COPY's binary format (else text,
// which CSV is too, as far as the protocol goes); columns is the number of
// columns copied.
type Copier interface {
	// CopyIn sends CopyInResponse and returns the client's data: a reader
	// of the payloads of its CopyData messages, which returns io.EOF after
	// CopyDone, and an error after CopyFail (57014, with the client's
	// message) or a message that has no place in COPY (08P01). The reader
	// is valid until the statement completes. Flush and Sync messages in
	// the data are ignored, as PostgreSQL does.
	CopyIn(binary bool, columns int) (io.Reader, error)
	// CopyOut sends CopyOutResponse; CopyData then sends data, and the
	// statement's Complete ends the copy (CopyDone, then CommandComplete).
	CopyOut(binary bool, columns int) error
	CopyData(p []byte) error
}

var _ Copier = (*resultWriter)(nil)

func copyFormats(binary bool, columns int) (overall byte, formats []uint16) {
	f := uint16(pgproto3.TextFormat)
	if binary {
		overall, f = 1, pgproto3.BinaryFormat
	}
	formats = make([]uint16, columns)
	for i := range formats {
		formats[i] = f
	}
	return overall, formats
}

// CopyIn implements Copier.
func (w *resultWriter) CopyIn(binary bool, columns int) (io.Reader, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	overall, formats := copyFormats(binary, columns)
	w.reported = true
	if err := w.c.send(&pgproto3.CopyInResponse{OverallFormat: overall, ColumnFormatCodes: formats}); err != nil {
		return nil, err
	}
	if err := w.c.flush(); err != nil {
		return nil, err
	}
	return &copyInReader{c: w.c}, nil
}

// CopyOut implements Copier.
func (w *resultWriter) CopyOut(binary bool, columns int) error {
	if err := w.check(); err != nil {
		return err
	}
	overall, formats := copyFormats(binary, columns)
	w.reported, w.copyOut = true, true
	return w.c.send(&pgproto3.CopyOutResponse{OverallFormat: overall, ColumnFormatCodes: formats})
}

// CopyData implements Copier.
func (w *resultWriter) CopyData(p []byte) error {
	if err := w.check(); err != nil {
		return err
	}
	if !w.copyOut {
		return sqlerr.New(sqlerr.InternalError, "pgwire: CopyData outside COPY TO STDOUT")
	}
	hdr := [5]byte{'d'}
	putLength(hdr[1:], len(p)+4)
	if err := w.c.write(hdr[:]); err != nil {
		return err
	}
	return w.c.write(p)
}

// endCopyOut sends CopyDone if a copy out is in progress.
func (w *resultWriter) endCopyOut() error {
	if !w.copyOut {
		return nil
	}
	w.copyOut = false
	return w.c.send(&pgproto3.CopyDone{})
}

func putLength(b []byte, n int) {
	b[0], b[1], b[2], b[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
}

// copyInReader reads the CopyData of a COPY FROM STDIN from the connection.
type copyInReader struct {
	c    *conn
	rest []byte // unread payload of the current CopyData
	err  error  // sticky: io.EOF after CopyDone
}

func (r *copyInReader) Read(p []byte) (int, error) {
	for len(r.rest) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.err = r.next()
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// next reads the next message of the copy.
func (r *copyInReader) next() error {
	typ, n, err := r.c.readHeader()
	if err != nil {
		r.c.readFailed("COPY data", err)
		return sqlerr.New(sqlerr.ConnectionFailure, "connection lost during COPY")
	}
	body, err := r.c.readBody(n)
	if err != nil {
		r.c.readFailed("COPY data", err)
		return sqlerr.New(sqlerr.ConnectionFailure, "connection lost during COPY")
	}
	switch typ {
	case 'd':
		r.rest = body
		return nil
	case 'c':
		return io.EOF
	case 'f':
		msg := string(body)
		if len(msg) > 0 && msg[len(msg)-1] == 0 {
			msg = msg[:len(msg)-1]
		}
		return sqlerr.New(sqlerr.QueryCanceled, "COPY from stdin failed: %s", msg)
	case 'H', 'S':
		return nil
	}
	return sqlerr.New(sqlerr.ProtocolViolation, "unexpected message type 0x%02X during COPY from stdin", typ)
}
