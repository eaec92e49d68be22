package parquetio

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"gocloud.dev/blob/memblob"
)

type failingReaderAt struct{ err error }

func (f failingReaderAt) ReadAt([]byte, int64) (int, error) { return 0, f.err }

// TestOpenStringsKeepsIOCause checks that an I/O error met while reading a
// file stays visible to errors.Is (a canceled read is not only bad input).
func TestOpenStringsKeepsIOCause(t *testing.T) {
	_, err := OpenStrings(failingReaderAt{context.Canceled}, 1<<10, "address")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrInvalid) {
		t.Errorf("OpenStrings with a canceled read = %v, want an error wrapping context.Canceled and ErrInvalid", err)
	}
}

type row struct {
	Address string  `parquet:"address,plain"`
	Other   int64   `parquet:"other"`
	Maybe   *string `parquet:"maybe,optional"`
}

// TestWriteThenRead: what a Writer writes, in row groups and pages of any
// size, Strings reads back in order, nulls left out, in bounded batches.
func TestWriteThenRead(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 255, 256, 257, 5000, rowsPerGroup + 3} {
		w, err := NewWriter[row](ctx, b, "part", "test")
		if err != nil {
			t.Fatal(err)
		}
		var want, wantMaybe []string
		for i := range n {
			a := string(rune('a'+r.IntN(26))) + string(make([]byte, r.IntN(40)))
			want = append(want, a)
			rw := row{Address: a, Other: int64(i)}
			if r.IntN(3) == 0 {
				rw.Maybe = &a
				wantMaybe = append(wantMaybe, a)
			}
			if err := w.Write(rw); err != nil {
				t.Fatal(err)
			}
		}
		if w.Rows() != int64(n) {
			t.Fatalf("Rows() = %d, want %d", w.Rows(), n)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := b.ReadAll(ctx, "part")
		if err != nil {
			t.Fatal(err)
		}
		for col, want := range map[string][]string{"address": want, "maybe": wantMaybe} {
			s, err := OpenStrings(bytes.NewReader(data), int64(len(data)), col)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				batch, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				if batch == nil {
					break
				}
				if len(batch) > batchValues {
					t.Fatalf("a batch of %d values", len(batch))
				}
				got = append(got, batch...)
			}
			s.Close()
			if !slices.Equal(got, want) {
				t.Fatalf("%d rows, column %s: read %d values, want %d", n, col, len(got), len(want))
			}
		}
		if _, err := OpenStrings(bytes.NewReader(data), int64(len(data)), "other"); !errors.Is(err, ErrInvalid) {
			t.Errorf("an INT64 column read as strings: %v", err)
		}
		if _, err := OpenStrings(bytes.NewReader(data), int64(len(data)), "none"); !errors.Is(err, ErrInvalid) {
			t.Errorf("a missing column: %v", err)
		}
	}
	// Aborted, or never closed: nothing is there.
	w, err := NewWriter[row](ctx, b, "aborted", "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(row{Address: "x"}); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if ok, _ := b.Exists(ctx, "aborted"); ok {
		t.Error("an aborted part is visible")
	}
}

// FuzzOpenStrings feeds any bytes as a Parquet file, from a file Writer
// wrote and its damaged copies: OpenStrings and Next give values in
// bounded batches or an error wrapping ErrInvalid, never a panic.
// (Package sweep's FuzzCandidates and FuzzCandidatesPages also hold the
// allocation bounds through its hostile parts.)
func FuzzOpenStrings(f *testing.F) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	w, err := NewWriter[row](ctx, b, "part", "test")
	if err != nil {
		f.Fatal(err)
	}
	for i := range 300 {
		a := string(rune('a' + i%26))
		if err := w.Write(row{Address: a, Other: int64(i), Maybe: &a}); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	data, err := b.ReadAll(ctx, "part")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(data[len(data)/3:])
	flipped := slices.Clone(data)
	flipped[len(flipped)/2] ^= 0xff
	f.Add(flipped)
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := OpenStrings(bytes.NewReader(data), int64(len(data)), "address")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("an error not wrapping ErrInvalid: %v", err)
			}
			return
		}
		defer s.Close()
		for {
			batch, err := s.Next()
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("an error not wrapping ErrInvalid: %v", err)
				}
				return
			}
			if batch == nil {
				return
			}
			if len(batch) > batchValues {
				t.Fatalf("a batch of %d values", len(batch))
			}
		}
	})
}
