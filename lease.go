package lakegc

import (
	"context"
	"fmt"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lease"
)

// withLease runs run holding the namespace's lease when Config.Lease asks
// for one: taken before anything else (an error wrapping lease.ErrHeld names
// the run holding it), released at the end, and the run's context
// cancelled, with an error wrapping lease.ErrLost, if the lease is lost.
func (c *cycle) withLease(ctx context.Context, run func(context.Context) error) error {
	if c.cfg.Lease == nil {
		return run(ctx)
	}
	l, err := lease.Acquire(ctx, c.cfg.Bucket, layout.LeaseFolder(c.cfg.StoragePrefix), *c.cfg.Lease)
	if err != nil {
		return fmt.Errorf("lakegc: %w", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-l.Done():
			cancel(l.Err())
		case <-ctx.Done():
		}
	}()
	err = run(ctx)
	if cause := context.Cause(ctx); err != nil && cause != nil && cause != ctx.Err() {
		err = fmt.Errorf("lakegc: %w (%w)", cause, err)
	}
	if rerr := l.Release(context.WithoutCancel(ctx)); err == nil && rerr != nil {
		err = fmt.Errorf("lakegc: %w", rerr)
	}
	return err
}
