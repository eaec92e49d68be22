package extsort

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// refRunNext reads the next key of a run file the way fileRun did before it
// decoded keys in its read buffer: varint by varint, byte by byte.
type refRun struct {
	r   *bufio.Reader
	buf []byte
	n   uint64
}

func (fr *refRun) Next() ([]byte, bool, error) {
	shared, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return nil, false, noEOF(err)
	}
	if shared == 0 {
		n, err := binary.ReadUvarint(fr.r)
		if err != nil {
			return nil, false, noEOF(err)
		}
		if n != fr.n {
			return nil, false, errors.New("count")
		}
		if _, err := fr.r.ReadByte(); err != io.EOF {
			return nil, false, errors.New("bytes after the end")
		}
		return nil, false, nil
	}
	shared--
	rest, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return nil, false, noEOF(err)
	}
	if shared > uint64(len(fr.buf)) || rest > maxKeyLen-shared {
		return nil, false, errors.New("lengths")
	}
	k := make([]byte, shared+rest)
	copy(k, fr.buf[:shared])
	if _, err := io.ReadFull(fr.r, k[shared:]); err != nil {
		return nil, false, noEOF(err)
	}
	fr.buf = k
	fr.n++
	return k, true, nil
}

// readAll reads every key of it up to its end or first error.
func readAll(it interface {
	Next() ([]byte, bool, error)
}, limit int) ([]string, error) {
	var keys []string
	for range limit {
		k, ok, err := it.Next()
		if err != nil || !ok {
			return keys, err
		}
		keys = append(keys, string(k))
	}
	return keys, errors.New("too many keys")
}

// TestRunFileMatchesReference writes run files, damages them (a flipped
// byte, a cut, bytes added), and reads each with fileRun through read
// buffers from the smallest up, and with the byte-by-byte reference: the
// same keys, and an error in both or in neither.
func TestRunFileMatchesReference(t *testing.T) {
	dir, err := NewSpillDir(t.TempDir(), 512)
	require.NoError(t, err)
	defer dir.Remove()
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 17))
		rw, err := dir.Create()
		require.NoError(t, err)
		for range r.IntN(200) {
			k := bytes.Repeat([]byte{'k'}, r.IntN(40))
			for range r.IntN(30) {
				k = append(k, "ab\x00\x80\xff"[r.IntN(5)])
			}
			require.NoError(t, rw.Add(k))
		}
		name, err := rw.Finish()
		require.NoError(t, err)
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		require.NoError(t, os.Remove(name))
		switch r.IntN(4) {
		case 0:
			data[r.IntN(len(data))] ^= byte(1 + r.IntN(255))
		case 1:
			data = data[:r.IntN(len(data))]
		case 2:
			i := r.IntN(len(data))
			data = slices.Insert(data, i, byte(r.IntN(256)))
		}
		want, wantErr := readAll(&refRun{r: bufio.NewReader(bytes.NewReader(data))}, len(data)+1)
		for _, size := range []int{16, 33, 4096} {
			file := filepath.Join(t.TempDir(), "run")
			require.NoError(t, os.WriteFile(file, data, 0o600))
			fr, err := OpenRun(file, size)
			require.NoError(t, err)
			got, gotErr := readAll(fr, len(data)+1)
			require.NoError(t, fr.Close())
			require.Equal(t, want, got, "seed %d buffer %d", seed, size)
			require.Equal(t, wantErr != nil, gotErr != nil, "seed %d buffer %d: %v, %v", seed, size, wantErr, gotErr)
		}
	}
}

// noEOF turns an end of file within a key into an unexpected one.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
