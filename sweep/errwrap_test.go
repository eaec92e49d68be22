package sweep

import (
	"context"
	"errors"
	"testing"
)

type failingReaderAt struct{ err error }

func (f failingReaderAt) ReadAt([]byte, int64) (int, error) { return 0, f.err }

// TestOpenAddressesKeepsIOCause checks that an I/O error met while reading a
// report file stays visible to errors.Is (a canceled read is not only bad
// input).
func TestOpenAddressesKeepsIOCause(t *testing.T) {
	_, err := openAddresses(failingReaderAt{context.Canceled}, 1<<10)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrInvalidInput) {
		t.Errorf("openAddresses with a canceled read = %v, want an error wrapping context.Canceled and ErrInvalidInput", err)
	}
}
