package uncommitted

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// failAt serves a valid file but fails every read that covers byte off with
// err, as a blob read does when its context is canceled mid-file.
type failAt struct {
	r   *bytes.Reader
	off int64
	err error
}

func (f *failAt) ReadAt(p []byte, off int64) (int, error) {
	if off <= f.off && f.off < off+int64(len(p)) {
		return 0, f.err
	}
	return f.r.ReadAt(p, off)
}

// TestReadKeepsIOCause checks that an I/O error met while decoding a file
// stays visible to errors.Is (a canceled read is not only a corrupt file).
func TestReadKeepsIOCause(t *testing.T) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[Row](&buf)
	// Pages past the footer's first read: openRows reads the footer first.
	rows := make([]Row, 2000)
	for i := range rows {
		rows[i] = Row{PhysicalAddress: fmt.Sprintf("data/%06d", i), CreationDate: int64(i)}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	size := int64(buf.Len())
	if size < 2*footerTail {
		t.Fatalf("a file of %d bytes: its pages are in the footer's first read", size)
	}

	_, _, err := openRows(&failAt{r: bytes.NewReader(buf.Bytes()), off: 0, err: context.Canceled}, size, nil)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrInvalidFile) {
		t.Errorf("openRows with a canceled read = %v, want an error wrapping context.Canceled and ErrInvalidFile", err)
	}

	// The magic and the footer read fine; the first page fails.
	r, _, err := openRows(&failAt{r: bytes.NewReader(buf.Bytes()), off: 4, err: context.Canceled}, size, nil)
	if err != nil {
		t.Skipf("openRows read the pages early: %v", err)
	}
	defer r.Close()
	_, err = readRows(r, make([]Row, 4))
	if err == io.EOF || !errors.Is(err, context.Canceled) || !errors.Is(err, ErrInvalidFile) {
		t.Errorf("readRows with a canceled read = %v, want an error wrapping context.Canceled and ErrInvalidFile", err)
	}
}
