package keycount

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lakegc/lakegc/internal/extsort"
)

// CopyFile copies a stream of format f from r to a new file of d, checking
// every entry on the way as a Decoder does, and returns the file's name
// and the stream's number of entries; ctx is looked at every 4096 entries.
// On an error no file is left: an error of the stream wraps f.Corrupt, and
// r's error stays in the chain.
func CopyFile(ctx context.Context, d *extsort.SpillDir, r io.Reader, f *Format) (string, int64, error) {
	file, err := d.CreateFile("record")
	if err != nil {
		return "", 0, err
	}
	w := bufio.NewWriterSize(file, d.IOBuf())
	fail := func(err error) (string, int64, error) {
		file.Close()
		os.Remove(file.Name())
		return "", 0, err
	}
	dec, err := NewDecoder(io.TeeReader(r, w), f, d.IOBuf())
	if err != nil {
		return fail(err)
	}
	for i := 1; ; i++ {
		_, _, _, ok, err := dec.Next()
		if err == nil && i%4096 == 0 {
			err = ctx.Err()
		}
		if err != nil {
			return fail(err)
		}
		if !ok {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return fail(fmt.Errorf("keycount: spill: %w", err))
	}
	if err := file.Close(); err != nil {
		os.Remove(file.Name())
		return "", 0, fmt.Errorf("keycount: spill: %w", err)
	}
	return file.Name(), dec.Count(), nil
}

// CopyCheckedFile copies a stream of format f from r to a new file of d,
// checking only its magic and checksum (CopyChecked): a copy at the speed
// of r and the disk, whose entries are checked when a Decoder reads them.
// It returns the file's name; ctx is looked at once the copy is done. On
// an error no file is left: a stream that is not of the format, or whose
// checksum fails, wraps f.Corrupt.
func CopyCheckedFile(ctx context.Context, d *extsort.SpillDir, r io.Reader, f *Format) (string, error) {
	file, err := d.CreateFile("record")
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(file, d.IOBuf())
	err = CopyChecked(w, r, f)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = w.Flush()
	}
	err = errors.Join(err, file.Close())
	if err != nil {
		os.Remove(file.Name())
		return "", err
	}
	return file.Name(), nil
}
