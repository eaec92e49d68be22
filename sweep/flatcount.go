package sweep

import (
	"bytes"
	"fmt"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/keycount"
)

// repeatCounts counts a flat keep set's keys: it reads an ascending stream
// that repeats a key once for every time it was given (an
// extsort.NewRepeatSorter's), and yields each key once, strictly ascending,
// counted w times for each time the stream gave it. A stream that goes back
// fails it. A keycount.Iter.
type repeatCounts struct {
	it      extsort.Iter
	w       int64
	what    string // names the stream in errors
	started bool
	next    []byte // the stream's key after the one yielded; valid until it.Next
	nextOK  bool
	key     []byte
	err     error
}

func newRepeatCounts(it extsort.Iter, w int64, what string) *repeatCounts {
	return &repeatCounts{it: it, w: w, what: what}
}

func (rc *repeatCounts) Next() ([]byte, int64, bool, error) {
	if rc.err != nil {
		return nil, 0, false, rc.err
	}
	if !rc.started {
		rc.started = true
		if rc.next, rc.nextOK, rc.err = rc.it.Next(); rc.err != nil {
			return nil, 0, false, rc.err
		}
	}
	if !rc.nextOK {
		return nil, 0, false, nil
	}
	rc.key = append(rc.key[:0], rc.next...)
	n := int64(1)
	for {
		k, ok, err := rc.it.Next()
		if err != nil {
			rc.err = err
			return nil, 0, false, err
		}
		if !ok {
			rc.next, rc.nextOK = nil, false
			break
		}
		c := bytes.Compare(k, rc.key)
		if c < 0 {
			rc.err = fmt.Errorf("sweep: %s out of order: %q after %q", rc.what, k, rc.key)
			return nil, 0, false, rc.err
		}
		if c > 0 {
			rc.next = k
			break
		}
		n++
	}
	return rc.key, n * rc.w, true, nil
}

func (rc *repeatCounts) Close() error { return rc.it.Close() }

var _ keycount.Iter = (*repeatCounts)(nil)
