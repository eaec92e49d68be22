package uncommitted

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go/format"
)

// TestCheckDictionaryPageBounds: checkDictionaryPage, which Addresses
// calls outside openFile's recover, refuses a chunk that starts before the
// file's pages or has a negative size with ErrInvalidFile, without a panic
// (its callers check the chunk's pages first, which refuse it too).
func TestCheckDictionaryPageBounds(t *testing.T) {
	file := bytes.Repeat([]byte{0}, 64)
	buf := make([]byte, 16)
	invalid := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidFile, fmt.Sprintf(format, a...))
	}
	for _, md := range []format.ColumnMetaData{
		{DictionaryPageOffset: -14, DataPageOffset: 8, TotalCompressedSize: 20},
		{DictionaryPageOffset: 2, DataPageOffset: 8, TotalCompressedSize: 20},
		{DictionaryPageOffset: 4, DataPageOffset: 8, TotalCompressedSize: -1},
	} {
		err := checkDictionaryPage(bytes.NewReader(file), &md, buf, invalid)
		if !errors.Is(err, ErrInvalidFile) {
			t.Errorf("dictionary page at %d of a chunk of %d bytes: %v, want ErrInvalidFile", md.DictionaryPageOffset, md.TotalCompressedSize, err)
		}
	}
}
