package faultblob_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/faultblob"
)

func filled(t testing.TB, n int) *blob.Bucket {
	t.Helper()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	for i := range n {
		if err := b.WriteAll(context.Background(), fmt.Sprintf("k/%03d", i), []byte(fmt.Sprintf("object %03d", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func listAll(ctx context.Context, b *blob.Bucket, prefix string) ([]string, error) {
	var keys []string
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return keys, nil
		}
		if err != nil {
			return keys, err
		}
		keys = append(keys, o.Key)
	}
}

// A wrapper without faults is the inner bucket.
func TestTransparent(t *testing.T) {
	ctx := context.Background()
	inner := filled(t, 25)
	fb, err := faultblob.New(inner, faultblob.WithMaxPageSize(4))
	if err != nil {
		t.Fatal(err)
	}
	b := fb.Bucket()
	want, _ := listAll(ctx, inner, "")
	if got, err := listAll(ctx, b, ""); err != nil || !slices.Equal(got, want) {
		t.Fatalf("listed %q, %v; want %q", got, err, want)
	}
	if got, err := b.ReadAll(ctx, "k/007"); err != nil || string(got) != "object 007" {
		t.Fatalf("read %q, %v", got, err)
	}
	r, err := b.NewRangeReader(ctx, "k/007", 2, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != "jec" {
		t.Fatalf("range read %q, %v", got, err)
	}
	if err := b.WriteAll(ctx, "new", []byte("x"), &blob.WriterOptions{IfNotExist: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "new", []byte("y"), &blob.WriterOptions{IfNotExist: true}); gcerrors.Code(err) != gcerrors.FailedPrecondition {
		t.Fatalf("second IfNotExist write: %v", err)
	}
	if err := b.Copy(ctx, "copy", "new", nil); err != nil {
		t.Fatal(err)
	}
	if a, err := b.Attributes(ctx, "copy"); err != nil || a.Size != 1 {
		t.Fatalf("attributes %+v, %v", a, err)
	}
	if err := b.Delete(ctx, "copy"); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "copy"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("second delete: %v", err)
	}
	if ok, err := inner.Exists(ctx, "copy"); ok || err != nil {
		t.Fatalf("deleted object still in the inner bucket: %v", err)
	}
	plain, err := faultblob.New(inner) // listing pages of the caller's size
	if err != nil {
		t.Fatal(err)
	}
	if got, err := listAll(ctx, plain.Bucket(), "k/"); err != nil || len(got) != 25 {
		t.Fatalf("listed %d keys, %v", len(got), err)
	}
	if fb.Total() != 0 {
		t.Fatalf("injected %v", fb.Counts())
	}
}

// outcome runs a fixed sequence of calls and records what each answered.
func outcome(t *testing.T, seed uint64) ([]string, map[string]int64) {
	ctx := context.Background()
	fb, err := faultblob.New(filled(t, 30), faultblob.WithSeed(seed), faultblob.WithRates(0.3),
		faultblob.WithMaxStall(time.Millisecond), faultblob.WithMaxPageSize(5))
	if err != nil {
		t.Fatal(err)
	}
	b := fb.Bucket()
	var out []string
	for i := range 30 {
		k := fmt.Sprintf("k/%03d", i)
		data, err := b.ReadAll(ctx, k)
		out = append(out, fmt.Sprintf("read %d %v", len(data), gcerrors.Code(err)))
		_, err = b.Attributes(ctx, k)
		out = append(out, fmt.Sprintf("attrs %v", gcerrors.Code(err)))
		if i%3 == 0 {
			out = append(out, fmt.Sprintf("delete %v", gcerrors.Code(b.Delete(ctx, k))))
		}
		if i%5 == 0 {
			keys, err := listAll(ctx, b, "k/")
			out = append(out, fmt.Sprintf("list %d %v", len(keys), gcerrors.Code(err)))
		}
	}
	return out, fb.Counts()
}

// The same seed gives the same faults; another seed, others.
func TestDeterministic(t *testing.T) {
	a, ca := outcome(t, 7)
	b, cb := outcome(t, 7)
	if !slices.Equal(a, b) || fmt.Sprint(ca) != fmt.Sprint(cb) {
		t.Fatalf("seed 7 twice:\n%q %v\n%q %v", a, ca, b, cb)
	}
	c, _ := outcome(t, 8)
	if slices.Equal(a, c) {
		t.Fatal("seeds 7 and 8 gave the same run")
	}
	for _, kind := range []string{"read/retryable", "read/permanent", "read/stall", "read/truncate",
		"list/cut-list"} {
		if ca[kind] == 0 {
			t.Errorf("no %s fault in %v", kind, ca)
		}
	}
}

// Each kind of fault shows as the caller must see it.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	fb, err := faultblob.New(filled(t, 40), faultblob.WithRates(1), faultblob.WithMaxPageSize(3),
		faultblob.WithMaxStall(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	b := fb.Bucket()
	seen := map[string]bool{}
	for i := range 40 {
		k := fmt.Sprintf("k/%03d", i)
		data, err := b.ReadAll(ctx, k)
		switch code := gcerrors.Code(err); {
		case err == nil:
			if string(data) != "object "+k[2:] {
				t.Fatalf("read %q after a stall", data)
			}
			seen["stall"] = true
		case errors.Is(err, io.ErrUnexpectedEOF):
			if len(data) >= len("object 000") {
				t.Fatalf("truncated read returned %d bytes", len(data))
			}
			seen["truncate"] = true
		case code == gcerrors.ResourceExhausted && errors.Is(err, faultblob.ErrInjected):
			seen["retryable"] = true
		case code == gcerrors.PermissionDenied && errors.Is(err, faultblob.ErrInjected):
			seen["permanent"] = true
		default:
			t.Fatalf("read %s: %v (%v)", k, err, code)
		}
		keys, err := listAll(ctx, b, "k/")
		if err == nil {
			if len(keys) != 40 {
				t.Fatalf("a listing without error gave %d keys", len(keys))
			}
		} else if gcerrors.Code(err) == gcerrors.Unknown && len(keys) > 0 {
			seen["cut"] = true
		}
	}
	for _, k := range []string{"stall", "truncate", "retryable", "permanent", "cut"} {
		if !seen[k] {
			t.Errorf("no %s fault seen; counts %v", k, fb.Counts())
		}
	}
}

// The spared calls get no fault; the next ones do.
func TestSpare(t *testing.T) {
	ctx := context.Background()
	fb, err := faultblob.New(filled(t, 10), faultblob.WithRate(faultblob.Attributes, 1),
		faultblob.WithSpare(faultblob.Attributes, 5), faultblob.WithMaxStall(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		_, _ = fb.Bucket().Attributes(ctx, fmt.Sprintf("k/%03d", i))
		if want := int64(max(0, i-4)); fb.Total() != want {
			t.Fatalf("after %d calls, %d faults; want %d", i+1, fb.Total(), want)
		}
	}
}

// A stall ends with the call's context.
func TestStallRespectsContext(t *testing.T) {
	fb, err := faultblob.New(filled(t, 50), faultblob.WithRate(faultblob.Attributes, 1),
		faultblob.WithMaxStall(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	for i := range 50 {
		_, _ = fb.Bucket().Attributes(ctx, fmt.Sprintf("k/%03d", i))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("stalls outlived the context: %v", d)
	}
	if fb.Count(faultblob.Attributes, faultblob.Stall) == 0 {
		t.Fatalf("no stall: %v", fb.Counts())
	}
}

func TestInvalidOptions(t *testing.T) {
	inner := filled(t, 0)
	for _, o := range []faultblob.Option{faultblob.WithRate(faultblob.Read, 1.5),
		faultblob.WithRate(faultblob.Read, -0.1), faultblob.WithRates(2),
		faultblob.WithRate(faultblob.Op(99), 0.5), faultblob.WithMaxStall(-time.Second),
		faultblob.WithMaxPageSize(-1), faultblob.WithSpare(faultblob.Read, -1),
		faultblob.WithSpare(faultblob.Op(-1), 1)} {
		if _, err := faultblob.New(inner, o); err == nil {
			t.Errorf("an invalid option was accepted")
		}
	}
}

func Example() {
	ctx := context.Background()
	inner := memblob.OpenBucket(nil)
	defer inner.Close()
	_ = inner.WriteAll(ctx, "a", []byte("hello"), nil)
	// Half the deletes fail, or stall and go through.
	fb, err := faultblob.New(inner, faultblob.WithSeed(1), faultblob.WithRate(faultblob.Delete, 0.5))
	if err != nil {
		panic(err)
	}
	for range 20 {
		err = fb.Bucket().Delete(ctx, "a")
		if err == nil {
			break
		}
	}
	fmt.Println(err == nil, fb.Total() > 0)
	// Output: true true
}
