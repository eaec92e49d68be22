package sweep

import (
	"math/rand/v2"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/faultblob"
)

// testDriver says what the tests need of a bucket over a base one (built
// with internal/faultblob by newTestBucket): the order of listings
// (shuffled across pages), the modification times objects report, keys
// listed more than once, delimiters ignored, and injected failures. The
// error functions are looked up at each call, so a test may change them
// after the bucket is made; the other fields are read once.
type testDriver struct {
	rng     *rand.Rand                 // non-nil: listings come back shuffled, seeded from it
	modTime func(key string) time.Time // nil: the base's
	// copies gives the modification times of further copies of key that a
	// listing returns, as a store that lists versions or replays a page
	// would: after the listing's last key (in order), or anywhere when
	// shuffled.
	copies func(key string) []time.Time
	// ignoreDelimiter says which delimited listings come back as if no
	// delimiter had been given, as from a backend that ignores it.
	ignoreDelimiter func(prefix string) bool
	// edit changes an entry of a listing of prefix before it is returned.
	edit      func(prefix string, o *driver.ListObject)
	listErr   func(prefix string) error
	deleteErr func(key string) error
	writeErr  func(key string) error
	readErr   func(key string) error
	// errorCode classifies errors as a particular driver would (nil: the
	// injected error's own code).
	errorCode func(error) (gcerrors.ErrorCode, bool)

	bucket *blob.Bucket // the bucket newTestBucket made
}

// codeErr is an injected error with a gocloud code.
type codeErr struct{ code gcerrors.ErrorCode }

func (e codeErr) Error() string { return "injected " + e.code.String() }

func (e codeErr) ErrorCode() gcerrors.ErrorCode { return e.code }

// newTestBucket returns a bucket over base that behaves as d says.
func newTestBucket(base *blob.Bucket, d *testDriver) *blob.Bucket {
	errs := func(op faultblob.Op, f *func(string) error) faultblob.Option {
		return faultblob.WithError(op, func(k string) error {
			if *f != nil {
				return (*f)(k)
			}
			return nil
		})
	}
	opts := []faultblob.Option{
		errs(faultblob.List, &d.listErr), errs(faultblob.Delete, &d.deleteErr),
		errs(faultblob.Write, &d.writeErr), errs(faultblob.Read, &d.readErr),
	}
	if d.modTime != nil {
		opts = append(opts, faultblob.WithModTime(func(k string, _ time.Time) time.Time { return d.modTime(k) }))
	}
	if d.copies != nil {
		opts = append(opts, faultblob.WithDuplicates(d.copies))
	}
	if d.rng != nil {
		opts = append(opts, faultblob.WithShuffledListings(), faultblob.WithSeed(d.rng.Uint64()))
	}
	if d.ignoreDelimiter != nil {
		opts = append(opts, faultblob.WithIgnoredDelimiter(d.ignoreDelimiter))
	}
	if d.edit != nil {
		opts = append(opts, faultblob.WithListEdit(d.edit))
	}
	if d.errorCode != nil {
		opts = append(opts, faultblob.WithErrorCode(d.errorCode))
	}
	fb, err := faultblob.New(base, opts...)
	if err != nil {
		panic(err) // the options above are valid
	}
	d.bucket = fb.Bucket()
	return d.bucket
}

// wrapBucket wraps b in a faultblob bucket with opts, for a fault on top
// of a testDriver's.
func wrapBucket(b *blob.Bucket, opts ...faultblob.Option) *blob.Bucket {
	fb, err := faultblob.New(b, opts...)
	if err != nil {
		panic(err)
	}
	return fb.Bucket()
}
