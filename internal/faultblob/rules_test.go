package faultblob_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"

	"github.com/lakegc/lakegc/internal/faultblob"
)

func wrap(t *testing.T, inner *blob.Bucket, opts ...faultblob.Option) (*faultblob.Bucket, *blob.Bucket) {
	t.Helper()
	fb, err := faultblob.New(inner, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return fb, fb.Bucket()
}

// coded is an error that carries its gocloud code.
type coded struct{ code gcerrors.ErrorCode }

func (e coded) Error() string                 { return "coded " + e.code.String() }
func (e coded) ErrorCode() gcerrors.ErrorCode { return e.code }

// WithError fails exactly the keys it chooses, with its error and code;
// the inner bucket does not see them.
func TestErrorRule(t *testing.T) {
	ctx := context.Background()
	inner := filled(t, 10)
	boom := coded{gcerrors.PermissionDenied}
	fb, b := wrap(t, inner, faultblob.WithError(faultblob.Delete, func(k string) error {
		if strings.HasSuffix(k, "3") {
			return boom
		}
		return nil
	}))
	for i := range 10 {
		k := fmt.Sprintf("k/%03d", i)
		err := b.Delete(ctx, k)
		ok, _ := inner.Exists(ctx, k)
		if i == 3 {
			if !errors.Is(err, boom) || gcerrors.Code(err) != gcerrors.PermissionDenied || !ok {
				t.Fatalf("delete %s = %v (%v), still stored %v", k, err, gcerrors.Code(err), ok)
			}
		} else if err != nil || ok {
			t.Fatalf("delete %s = %v, still stored %v", k, err, ok)
		}
	}
	if fb.Calls(faultblob.Delete) != 10 || fb.Total() != 0 {
		t.Fatalf("calls %d, seeded faults %d", fb.Calls(faultblob.Delete), fb.Total())
	}
}

// A hook sees each call with its count, and its After runs once the inner
// bucket answered; a listing's hook sees the page's token and size.
func TestHook(t *testing.T) {
	ctx := context.Background()
	var calls []string
	var inFlight, peak atomic.Int64
	_, b := wrap(t, filled(t, 10), faultblob.WithMaxPageSize(4),
		faultblob.WithHook(faultblob.List, func(_ context.Context, c *faultblob.Call) error {
			calls = append(calls, fmt.Sprintf("%d %s %q %d", c.N, c.Key, c.PageToken, c.PageSize))
			peak.Store(max(peak.Load(), inFlight.Add(1)))
			c.After = func() { inFlight.Add(-1) }
			return nil
		}))
	keys, err := listAll(ctx, b, "k/")
	if err != nil || len(keys) != 10 {
		t.Fatalf("listed %d keys, %v", len(keys), err)
	}
	if len(calls) != 3 || !strings.HasPrefix(calls[0], `1 k/ "" 4`) || !strings.HasPrefix(calls[2], "3 k/ ") {
		t.Fatalf("hook saw %q", calls)
	}
	if inFlight.Load() != 0 || peak.Load() != 1 {
		t.Fatalf("in flight %d after the listing, peak %d", inFlight.Load(), peak.Load())
	}
}

// A latency delays the calls it chooses, until the context ends.
func TestLatency(t *testing.T) {
	_, b := wrap(t, filled(t, 2), faultblob.WithLatency(faultblob.Attributes, func(k string) time.Duration {
		if k == "k/001" {
			return time.Hour
		}
		return 0
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Attributes(ctx, "k/000"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := b.Attributes(ctx, "k/001")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("slow call = %v after %v", err, time.Since(start))
	}
}

// A short read ends with io.ErrUnexpectedEOF after the chosen bytes.
func TestShortRead(t *testing.T) {
	ctx := context.Background()
	_, b := wrap(t, filled(t, 2), faultblob.WithShortRead(func(k string) int64 {
		if k == "k/001" {
			return 3
		}
		return -1
	}))
	if got, err := b.ReadAll(ctx, "k/000"); err != nil || string(got) != "object 000" {
		t.Fatalf("whole read = %q, %v", got, err)
	}
	got, err := b.ReadAll(ctx, "k/001")
	if !errors.Is(err, io.ErrUnexpectedEOF) || string(got) != "obj" {
		t.Fatalf("short read = %q, %v", got, err)
	}
}

// The phases of a write: a Close hook's error aborts it (nothing stored),
// a Commit hook's error comes after the object is stored, and WriteData
// sees the object partly written. fileblob writes to a temporary file, so
// the partial object must not show.
func TestWritePhases(t *testing.T) {
	ctx := context.Background()
	inner, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	lost := errors.New("the answer was lost")
	var partial []bool
	fb, b := wrap(t, inner,
		faultblob.WithError(faultblob.Close, func(k string) error {
			if k == "aborted" {
				return lost
			}
			return nil
		}),
		faultblob.WithError(faultblob.Commit, func(k string) error {
			if k == "ambiguous" {
				return lost
			}
			return nil
		}),
		faultblob.WithHook(faultblob.WriteData, func(ctx context.Context, c *faultblob.Call) error {
			ok, _ := inner.Exists(ctx, c.Key)
			partial = append(partial, ok)
			return nil
		}))
	for _, k := range []string{"aborted", "ambiguous", "fine"} {
		err := b.WriteAll(ctx, k, []byte("data of "+k), &blob.WriterOptions{ContentType: "text/plain"})
		stored, _ := inner.Exists(ctx, k)
		want := k != "aborted"
		if stored != want || (k == "fine") != (err == nil) || err != nil && !errors.Is(err, lost) {
			t.Errorf("%s: write = %v, stored %v", k, err, stored)
		}
	}
	if !slices.Equal(partial, []bool{false, false, false}) || fb.Calls(faultblob.Commit) != 2 {
		t.Errorf("a partial write showed: %v; %d commits", partial, fb.Calls(faultblob.Commit))
	}
}

// Listing anomalies: duplicates, a shuffle that is a permutation of the
// same seed's, an ignored delimiter, edits, and times of the test's choice.
func TestListingAnomalies(t *testing.T) {
	ctx := context.Background()
	inner := filled(t, 30)
	if err := inner.WriteAll(ctx, "k/sub/x", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	list := func(seed uint64, delim string, opts ...faultblob.Option) []string {
		_, b := wrap(t, inner, append([]faultblob.Option{faultblob.WithSeed(seed), faultblob.WithMaxPageSize(7)}, opts...)...)
		var out []string
		it := b.List(&blob.ListOptions{Prefix: "k/", Delimiter: delim})
		for {
			o, err := it.Next(ctx)
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s@%d", o.Key, o.ModTime.Year()))
		}
	}
	plain := list(1, "/", faultblob.WithModTime(func(string, time.Time) time.Time { return t0 }))
	if len(plain) != 31 || plain[30] != "k/sub/@1" || plain[0] != "k/000@2020" {
		t.Fatalf("plain listing %q", plain)
	}
	dup := list(1, "/", faultblob.WithDuplicates(func(k string) []time.Time {
		if k == "k/004" {
			return []time.Time{t0, t0}
		}
		return nil
	}))
	if len(dup) != 33 || dup[31] != "k/004@2020" || dup[32] != "k/004@2020" {
		t.Fatalf("listing with duplicates %q", dup)
	}
	a := list(5, "/", faultblob.WithShuffledListings())
	b := list(5, "/", faultblob.WithShuffledListings())
	c := list(6, "/", faultblob.WithShuffledListings())
	if !slices.Equal(a, b) || slices.Equal(a, plain) || slices.Equal(a, c) {
		t.Fatalf("shuffles: seed 5 %q, again %q, seed 6 %q", a, b, c)
	}
	slices.Sort(a)
	if want := list(1, "/"); !slices.Equal(a, slices.Sorted(slices.Values(want))) {
		t.Fatalf("a shuffled listing is not the listing: %q", a)
	}
	flat := list(1, "/", faultblob.WithIgnoredDelimiter(func(p string) bool { return p == "k/" }))
	if len(flat) != 31 || !slices.Contains(flat, "k/sub/x@"+fmt.Sprint(time.Now().Year())) {
		t.Fatalf("listing without its delimiter %q", flat)
	}
	edited := list(1, "", faultblob.WithListEdit(func(p string, o *driver.ListObject) {
		o.Key = strings.TrimPrefix(o.Key, p)
	}))
	if edited[0] != fmt.Sprintf("000@%d", time.Now().Year()) {
		t.Fatalf("edited listing %q", edited)
	}
}

// WithErrorCode classifies as a particular driver would, and ErrorAs finds
// the store's error a hook gave.
func TestErrorCode(t *testing.T) {
	ctx := context.Background()
	forbidden := &googleapi.Error{Code: http.StatusForbidden, Message: "retentionPolicyNotMet"}
	_, b := wrap(t, filled(t, 1),
		faultblob.WithError(faultblob.Read, func(string) error { return forbidden }),
		faultblob.WithErrorCode(func(err error) (gcerrors.ErrorCode, bool) {
			var g *googleapi.Error
			if errors.As(err, &g) && g.Code == http.StatusForbidden {
				return gcerrors.NotFound, true // as gcsblob says
			}
			return 0, false
		}))
	_, err := b.ReadAll(ctx, "k/000")
	var g *googleapi.Error
	if gcerrors.Code(err) != gcerrors.NotFound || !b.ErrorAs(err, &g) || g.Message != "retentionPolicyNotMet" {
		t.Fatalf("read = %v (%v)", err, gcerrors.Code(err))
	}
	if _, err := b.ReadAll(ctx, "absent"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("the inner bucket's codes are lost: %v", err)
	}
}

func TestInvalidRules(t *testing.T) {
	inner := filled(t, 0)
	for _, o := range []faultblob.Option{faultblob.WithRate(faultblob.Commit, 0.5),
		faultblob.WithSpare(faultblob.Close, 1), faultblob.WithHook(faultblob.Op(42), func(context.Context, *faultblob.Call) error { return nil }),
		faultblob.WithHook(faultblob.List, nil), faultblob.WithError(faultblob.Read, nil),
		faultblob.WithLatency(faultblob.Read, nil), faultblob.WithShortRead(nil), faultblob.WithErrorCode(nil), faultblob.WithFaultKeys(nil)} {
		if _, err := faultblob.New(inner, o); !errors.Is(err, faultblob.ErrInvalidInput) {
			t.Errorf("an invalid option gave %v", err)
		}
	}
	if _, err := faultblob.New(nil); !errors.Is(err, faultblob.ErrInvalidInput) {
		t.Errorf("a nil bucket gave %v", err)
	}
}

// WithFaultKeys keeps the seeded faults off the keys it leaves out, and
// the keys in scope get the faults they would get with every key in scope.
func TestFaultKeys(t *testing.T) {
	ctx := context.Background()
	run := func(opts ...faultblob.Option) map[string]bool {
		_, b := wrap(t, filled(t, 40), append([]faultblob.Option{faultblob.WithSeed(3),
			faultblob.WithRate(faultblob.Attributes, 0.5), faultblob.WithMaxStall(0)}, opts...)...)
		failed := map[string]bool{}
		for i := range 40 {
			k := fmt.Sprintf("k/%03d", i)
			if _, err := b.Attributes(ctx, k); err != nil {
				failed[k] = true
			}
		}
		return failed
	}
	all := run()
	even := run(faultblob.WithFaultKeys(func(op faultblob.Op, k string) bool {
		return op == faultblob.Attributes && (k[len(k)-1]-'0')%2 == 0
	}))
	var inScope int
	for k := range all {
		if (k[len(k)-1]-'0')%2 == 0 {
			inScope++
			if !even[k] {
				t.Errorf("%s failed with every key in scope, not with the even ones", k)
			}
		}
	}
	for k := range even {
		if (k[len(k)-1]-'0')%2 != 0 || !all[k] {
			t.Errorf("%s failed out of scope or by another draw", k)
		}
	}
	if inScope == 0 {
		t.Fatalf("no even key failed: %v", all)
	}
}
