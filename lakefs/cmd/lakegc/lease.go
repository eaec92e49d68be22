package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lease"
)

// exitBusy is the exit code of a command that found another run holding
// the repository's lease.
const exitBusy = 5

// leaseFlags are the flags of the lease one run at a time holds.
type leaseFlags struct {
	wait time.Duration
	off  bool
}

// addLeaseFlags adds --lease-wait and --no-lease to a command that works on
// a repository's namespace.
func addLeaseFlags(fs *flag.FlagSet, f *leaseFlags) {
	fs.DurationVar(&f.wait, "lease-wait", 0, "when another lakegc run holds the repository's lease, wait up to this long for it (default: fail at once, exit code 5)")
	fs.BoolVar(&f.off, "no-lease", false, "run without taking the repository's lease, beside any other run (not advised; on a local blockstore the lease is best effort, see package lease)")
}

// options are the lease's options, nil with --no-lease.
func (f leaseFlags) options() *lease.Options {
	if f.off {
		return nil
	}
	host, _ := os.Hostname()
	return &lease.Options{Holder: "lakegc " + version() + " on " + host + " pid " + strconv.Itoa(os.Getpid()), Wait: f.wait}
}

// leaseCode is the exit code of a failure to take the lease.
func leaseCode(err error) int {
	if errors.Is(err, lease.ErrHeld) {
		return exitBusy
	}
	return exitFailed
}

// hold takes the lease of the namespace in bucket for a command other than
// gc and sweep (whose Collect takes it itself): the context it returns is
// cancelled, with the lease's error as its cause, if the lease is lost, so
// that the command stops before it deletes or copies more; release is a
// no-op with --no-lease.
func (f leaseFlags) hold(ctx context.Context, bucket *blob.Bucket) (context.Context, func(), error) {
	o := f.options()
	if o == nil {
		return ctx, func() {}, nil
	}
	l, err := lease.Acquire(ctx, bucket, layout.LeaseFolder(lakegc.DefaultStoragePrefix), *o)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (another lakegc on this repository; --lease-wait to wait for it)", err)
	}
	lctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-l.Done():
			cancel(l.Err())
		case <-lctx.Done():
		}
	}()
	return lctx, func() {
		cancel(nil)
		_ = l.Release(context.WithoutCancel(ctx))
	}, nil
}

// lostLease names the lost lease in err when it is why ctx (from hold) was
// cancelled.
func lostLease(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, lease.ErrLost) {
		return fmt.Errorf("%w (%w)", cause, err)
	}
	return err
}
