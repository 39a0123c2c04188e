// echo_server: a TCP echo server in Go, a goroutine per connection, the Go
// side of the echo workload (bench/erlang/echo.erl is Erlang's).
// Run: go run echo_server.go 7000   (prints `echo listening port=PORT`)
package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	port := "7000"
	if len(os.Args) > 1 {
		port = os.Args[1]
	}
	l, err := net.Listen("tcp", ":"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("echo listening port=%d\n", l.Addr().(*net.TCPAddr).Port)
	for {
		c, err := l.Accept()
		if err != nil {
			continue
		}
		go func(c net.Conn) {
			defer c.Close()
			c.(*net.TCPConn).SetNoDelay(true)
			buf := make([]byte, 16*1024)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
		}(c)
	}
}
