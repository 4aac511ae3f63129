package main

import (
	"fmt"
	"os"
	"os/signal"

	"github.com/streamsql/streamsql/internal/pgtest"
)

func main() {
	s, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.URL)
	os.WriteFile("/tmp/pgurl", []byte(s.URL), 0o644)
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, os.Kill)
	<-c
	s.Stop()
}
