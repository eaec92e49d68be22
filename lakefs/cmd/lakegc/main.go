package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], processEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// processEnv is the command's environment: the process's, without
// LAKEGC_NOW, which only tests that call run set. A stray LAKEGC_NOW in
// the future would move the cutoff past objects still in flight (uploaded,
// not linked yet), and the sweep would delete them.
func processEnv(k string) string {
	if k == envNow {
		return ""
	}
	return os.Getenv(k)
}
