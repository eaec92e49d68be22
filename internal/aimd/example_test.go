package aimd_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lakegc/lakegc/internal/aimd"
)

var errSlowDown = errors.New("slow down")

// A window of 8 requests that the store throttles once: it halves.
func Example() {
	ctx := context.Background()
	w := aimd.New(1, 8, 64)
	request := func(i int) error {
		if i == 3 {
			return errSlowDown
		}
		return nil
	}
	for i := range 8 {
		t, err := w.Acquire(ctx)
		if err != nil {
			panic(err)
		}
		o := aimd.Answered
		if errors.Is(request(i), errSlowDown) {
			o = aimd.Throttled
		}
		// The caller spent more time on the previous answer than the
		// store took: the window does not grow.
		w.Release(t, o, 1<<62)
	}
	fmt.Println(w.Limit(), w.MaxInFlight())
	// Output: 4 1
}
