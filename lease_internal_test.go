package lakegc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lease"
)

// A run whose lease another run takes over (its holder paused past the TTL,
// say) is stopped, with an error wrapping lease.ErrLost naming the taker;
// its lease is left alone.
func TestWithLeaseStopsWhenLost(t *testing.T) {
	b := memblob.OpenBucket(nil)
	folder := layout.LeaseFolder(DefaultStoragePrefix)
	c := &cycle{cfg: settings{Config: Config{Bucket: b, StoragePrefix: DefaultStoragePrefix,
		Lease: &lease.Options{Holder: "slow-gc", TTL: 300 * time.Millisecond, Settle: -1}}}}
	err := c.withLease(context.Background(), func(ctx context.Context) error {
		// The next generation, as a run that took the lease over writes it.
		ctx2 := context.Background()
		var last string
		it := b.List(&blob.ListOptions{Prefix: folder})
		for {
			o, err := it.Next(ctx2)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			last = o.Key
		}
		var gen uint64
		if _, err := fmt.Sscanf(last[len(folder):], "%d", &gen); err != nil {
			return err
		}
		rec := fmt.Sprintf(`{"holder":"fast-gc","token":"x","expires":%q}`, time.Now().Add(time.Hour).Format(time.RFC3339))
		if err := b.WriteAll(ctx2, fmt.Sprintf("%s%020d", folder, gen+1), []byte(rec), nil); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
			return errors.New("the run went on with a lost lease")
		}
	})
	if !errors.Is(err, lease.ErrLost) || !errors.Is(err, context.Canceled) {
		t.Fatalf("run with a lost lease: %v", err)
	}
	if !errors.Is(err, lease.ErrLost) || !strings.Contains(err.Error(), "fast-gc") {
		t.Errorf("error %q does not name the taker", err)
	}
	// The taker's lease stands.
	_, err = lease.Acquire(context.Background(), b, folder, lease.Options{Holder: "third", Settle: -1})
	if !errors.Is(err, lease.ErrHeld) || !strings.Contains(err.Error(), "fast-gc") {
		t.Errorf("after the takeover: %v", err)
	}
}
