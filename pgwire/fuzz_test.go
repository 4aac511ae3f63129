package pgwire

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/xdg-go/scram"
)

// encode concatenates the wire bytes of frontend messages.
func encode(msgs ...pgproto3.FrontendMessage) []byte {
	var b []byte
	for _, m := range msgs {
		var err error
		if b, err = m.Encode(b); err != nil {
			panic(err)
		}
	}
	return b
}

func fuzzSeeds() [][]byte {
	startup := encode(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "u", "database": "d"}})
	ssl := withLength(binary.BigEndian.AppendUint32(nil, sslRequestCode))
	gss := withLength(binary.BigEndian.AppendUint32(nil, gssEncRequestCode))
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	return [][]byte{
		cat(startup, encode(
			&pgproto3.Query{String: "select 1; rows 10; types; notice x; set a b; insert"},
			&pgproto3.Query{String: "error"},
			&pgproto3.Query{String: " ; "},
			&pgproto3.Query{String: "begin; block; plainerror"},
			&pgproto3.Terminate{})),
		cat(ssl, gss, startup, encode(&pgproto3.Query{String: "misuse; mismatch"}, &pgproto3.Terminate{})),
		cat(startup, encode(
			&pgproto3.Parse{Query: "select 1"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{}, &pgproto3.Sync{}, &pgproto3.Sync{},
			&pgproto3.FunctionCall{Function: 7}, &pgproto3.CopyData{Data: []byte("x")}, &pgproto3.CopyDone{},
			&pgproto3.Flush{}, &pgproto3.Close{ObjectType: 'S'}, &pgproto3.Sync{}, &pgproto3.Terminate{})),
		cat(startup, encode(
			&pgproto3.Parse{Name: "s", Query: "echo $1:int4 $2 $3", ParameterOIDs: []uint32{0, 0, 20}},
			&pgproto3.Describe{ObjectType: 'S', Name: "s"},
			&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s", ParameterFormatCodes: []int16{0, 0, 1},
				Parameters: [][]byte{[]byte("1"), nil, {0, 0, 0, 0, 0, 0, 0, 9}}, ResultFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P', Name: "p"}, &pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{},
			&pgproto3.Parse{Name: "r", Query: "rows 30"}, &pgproto3.Bind{PreparedStatement: "r"},
			&pgproto3.Execute{MaxRows: 7}, &pgproto3.Execute{MaxRows: 7}, &pgproto3.Flush{},
			&pgproto3.Parse{Query: "types"}, &pgproto3.Bind{ResultFormatCodes: []int16{1}}, &pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "nope"}, &pgproto3.Execute{}, &pgproto3.Sync{},
			&pgproto3.Query{String: "begin"}, &pgproto3.Bind{DestinationPortal: "q", PreparedStatement: "r"},
			&pgproto3.Execute{Portal: "q", MaxRows: 1}, &pgproto3.Sync{}, &pgproto3.Close{ObjectType: 'P', Name: "q"},
			&pgproto3.Close{ObjectType: 'S', Name: "s"}, &pgproto3.Sync{}, &pgproto3.Terminate{})),
		encode(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32,
			Parameters: map[string]string{"user": "u", "_pq_.x": "1"}}, &pgproto3.Terminate{}),
		withLength(startupPacket(2<<16, "user", "u")),
		withLength(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(
			binary.BigEndian.AppendUint32(nil, cancelRequestCode), 1001), 42)),
		cat(startup, []byte{'Z', 0, 0, 0, 4}),
		cat(startup, []byte{'Q', 0x7f, 0xff, 0xff, 0xff}),
		cat(startup, []byte{'Q', 0, 0, 0, 6, 'a', 'b', 'X', 0, 0, 0, 4}),
		cat(encode(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": fuzzSCRAMUser}}),
			encode(&pgproto3.SASLInitialResponse{AuthMechanism: mechSCRAM, Data: []byte("n,,n=,r=abcdefghijklmnop")},
				&pgproto3.SASLResponse{Data: []byte("c=biws,r=abcdefghijklmnop,p=AAAA")})),
		cat(encode(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": fuzzSCRAMUser}}),
			encode(&pgproto3.SASLInitialResponse{AuthMechanism: mechSCRAMPlus, Data: []byte("p=tls-server-end-point,,n=,r=x")})),
		cat(encode(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": fuzzMD5User}}),
			encode(&pgproto3.PasswordMessage{Password: "md5" + fuzzMD5Secret[3:]}, &pgproto3.Query{String: "select 1"})),
		cat(encode(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": fuzzMD5User}}),
			encode(&pgproto3.SASLInitialResponse{AuthMechanism: mechSCRAM, Data: []byte("n,,n=,r=x")})),
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		{0, 0, 0, 8, 0, 0, 0, 0},
		{},
	}
}

// countingConn counts the bytes read from it.
type countingConn struct {
	net.Conn
	read atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// FuzzServeConn feeds raw bytes to ServeConn through net.Pipe. The server must
// neither panic nor hang, whatever the bytes.
//
// The client end hangs up once the server has read every byte and waits for
// more (it reports waiting through Server.testHookWaitInput), or once the
// server has closed the connection.
func FuzzServeConn(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	terminate := encode(&pgproto3.Terminate{})
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		e := newFakeEngine(mem)
		e.noBlock = true
		srv := NewServer(e, Options{Auth: fuzzAuth{}})
		defer srv.Close()

		a, b := net.Pipe()
		input := append(append([]byte(nil), data...), terminate...)
		server := &countingConn{Conn: a}
		starved := make(chan struct{})
		var once sync.Once
		srv.testHookWaitInput = func() {
			if server.read.Load() == int64(len(input)) {
				once.Do(func() { close(starved) })
			}
		}
		served := make(chan struct{})
		go func() {
			srv.ServeConn(context.Background(), server)
			close(served)
		}()
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, b)
			close(drained)
		}()
		// A deadline bounds the write in case the server stops reading
		// without closing (which would be a bug).
		b.SetWriteDeadline(time.Now().Add(10 * time.Second))
		b.Write(input)
		select {
		case <-drained:
		case <-starved:
		case <-served:
		}
		b.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatal("ServeConn did not return after the client hung up")
		}
		<-drained
	})
}

// fuzzSCRAMUser is the user the fuzz server asks for a SCRAM exchange.
const fuzzSCRAMUser = "scram"

// fuzzMD5User is the user the fuzz server asks for md5 authentication, and
// fuzzMD5Secret its stored hash (password "pw").
const (
	fuzzMD5User   = "md5"
	fuzzMD5Secret = "md5" + "14b41e8aafff866e8f68c84295626136"
)

// fuzzAuth asks fuzzSCRAMUser for SCRAM-SHA-256 (password "pw"),
// fuzzMD5User for md5, and trusts everyone else.
type fuzzAuth struct{}

func (fuzzAuth) Method(user string, _ net.Addr, _ bool) (AuthMethod, error) {
	switch user {
	case fuzzSCRAMUser:
		return AuthSCRAM, nil
	case fuzzMD5User:
		return AuthMD5, nil
	}
	return AuthTrust, nil
}

func (fuzzAuth) MD5Secret(string) (string, error) { return fuzzMD5Secret, nil }

func (fuzzAuth) Credentials(user string) (scram.StoredCredentials, error) {
	c, err := scram.SHA256.NewClient(user, "pw", "")
	if err != nil {
		return scram.StoredCredentials{}, err
	}
	return c.GetStoredCredentialsWithError(scram.KeyFactors{Salt: "0123456789abcdef", Iters: 4096})
}
