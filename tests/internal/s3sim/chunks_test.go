package s3sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
)

// TestChunksReaderEveryRange: for chunk layouts with short, long and empty
// chunks (a copy of an empty generated file holds one nil chunk), every
// offset from 0 to the end and every length from 0 to past the end reads
// what the joined bytes hold there — ranges that start or stop exactly at
// a chunk's end included.
func TestChunksReaderEveryRange(t *testing.T) {
	layouts := [][]int{{}, {0}, {1}, {5}, {1, 1, 1}, {3, 0, 4}, {0, 2, 0, 0, 3, 0}, {4, 4, 8, 16, 5}}
	for _, layout := range layouts {
		var chunks [][]byte
		var joined []byte
		for i, n := range layout {
			var c []byte
			if n > 0 || i%2 == 0 {
				c = make([]byte, n)
			}
			for j := range c {
				c[j] = byte(len(joined) + j + 1)
			}
			chunks = append(chunks, c)
			joined = append(joined, c...)
		}
		size := int64(len(joined))
		for off := int64(0); off <= size; off++ {
			for n := int64(0); off+n <= size+2; n++ {
				want := joined[off:min(size, off+n)]
				got, err := io.ReadAll(chunksReader(chunks, off, min(n, size-off)))
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("layout %v: %d bytes from %d = %v (%v), want %v", layout, n, off, got, err, want)
				}
			}
		}
	}
}

// TestCopyIndependentOfSource: a copy of a written object shares its
// chunks, but no later write, overwrite (shorter, as long, longer) or
// delete of the source changes what the copy reads, nor the copy's
// attributes.
func TestCopyIndependentOfSource(t *testing.T) {
	ctx := context.Background()
	store := newTestStore(t)
	b := store.Bucket()
	defer b.Close()
	fill := func(n int, v byte) []byte { return bytes.Repeat([]byte{v}, n) }
	orig := fill(3*writeChunk+777, 'a')
	if err := b.WriteAll(ctx, "src", orig, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Copy(ctx, "dst", "src", nil); err != nil {
		t.Fatal(err)
	}
	a0, err := b.Attributes(ctx, "dst")
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got, err := b.ReadAll(ctx, "dst")
		if err != nil || !bytes.Equal(got, orig) {
			t.Fatalf("%s: the copy reads %d bytes (%v), want %d of 'a'", when, len(got), err, len(orig))
		}
		a, err := b.Attributes(ctx, "dst")
		if err != nil || a.Size != a0.Size || !bytes.Equal(a.MD5, a0.MD5) {
			t.Fatalf("%s: the copy's attributes %+v (%v), were %+v", when, a, err, a0)
		}
	}
	for _, n := range []int{10, len(orig), len(orig) + writeChunk} {
		if err := b.WriteAll(ctx, "src", fill(n, 'b'), nil); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("after an overwrite of %d bytes", n))
	}
	if err := b.Delete(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	check("after the delete")
	if got, want := store.OverlayBytes(), int64(len(orig)); got != want {
		t.Fatalf("the overlay holds %d bytes, want %d (the copy's)", got, want)
	}
}

// TestReadWhileOverwritten: readers of a key, and copies of it, read whole
// objects (all one byte, as long as the reader says) while another
// goroutine overwrites the key with objects of other sizes and bytes.
// Run with -race.
func TestReadWhileOverwritten(t *testing.T) {
	ctx := context.Background()
	store := newTestStore(t)
	b := store.Bucket()
	defer b.Close()
	sizes := []int{1, 4<<10 + 3, writeChunk + 5, 0, 2*writeChunk + 1}
	obj := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, sizes[i%len(sizes)]) }
	if err := b.WriteAll(ctx, "k", obj(0), nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for i := 1; i < 60; i++ {
			if err := b.WriteAll(ctx, "k", obj(i), nil); err != nil {
				t.Error(err)
				return
			}
		}
	})
	whole := func(key string, r *blob.Reader) error {
		defer r.Close()
		d, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if int64(len(d)) != r.Size() {
			return fmt.Errorf("%q: %d bytes, its reader says %d", key, len(d), r.Size())
		}
		for _, c := range d {
			if c != d[0] {
				return fmt.Errorf("%q: bytes of two objects in one read", key)
			}
		}
		return nil
	}
	for g := range 2 {
		wg.Go(func() {
			key := "k"
			if g == 1 {
				key = fmt.Sprintf("copy%d", g)
			}
			for {
				select {
				case <-done:
					return
				default:
				}
				if g == 1 {
					if err := b.Copy(ctx, key, "k", nil); err != nil {
						t.Error(err)
						return
					}
				}
				r, err := b.NewRangeReader(ctx, key, 0, -1, nil)
				if err != nil {
					t.Error(err)
					return
				}
				if err := whole(key, r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestWriterClosedTwice: closing a writer a second time (blob.Writer
// calls its driver's Close again) must neither change nor remove the
// object the first Close wrote, in memory or on disk.
func TestWriterClosedTwice(t *testing.T) {
	ctx := context.Background()
	for _, disk := range []bool{false, true} {
		var opts []Option
		if disk {
			opts = append(opts, WithDiskOverlay(t.TempDir()))
		}
		store := newTestStore(t, opts...)
		b := store.Bucket()
		want := []byte("hello, twice")
		// Through blob.Writer.
		w, err := b.NewWriter(ctx, "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(want); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_ = w.Close() // an error or not, the object stays
		if got, err := b.ReadAll(ctx, "k"); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("disk %v: after blob.Writer's second Close, %q reads %q (%v), want %q", disk, "k", got, err, want)
		}
		// Through the driver, as the HTTP server writes.
		dw, err := (&bucket{s: store}).NewTypedWriter(ctx, "d", "text/plain", &driver.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dw.Write(want); err != nil {
			t.Fatal(err)
		}
		if err := dw.Close(); err != nil {
			t.Fatal(err)
		}
		_ = dw.Close()
		a, aerr := b.Attributes(ctx, "d")
		if got, err := b.ReadAll(ctx, "d"); err != nil || aerr != nil || !bytes.Equal(got, want) || a.Size != int64(len(want)) {
			t.Fatalf("disk %v: after the driver's second Close, %q reads %q (%v), size %v (%v), want %q", disk, "d", got, err, a, aerr, want)
		}
		b.Close()
	}
}
