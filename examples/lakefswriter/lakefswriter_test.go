package lakefswriter_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"github.com/lakegc/lakegc/uncommitted"
	"github.com/rs/xid"
	"github.com/xitongsys/parquet-go/parquet"
	"github.com/xitongsys/parquet-go/writer"
)

// genSource is the staging area of uncommitted's BenchmarkPrepare, generated
// the same way: branches x perBranch entries, addresses data/<slice>/<xid>
// from deterministic xids, strings cut from arenas.
type genSource struct{ branches, perBranch int }

func (g genSource) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for i := range g.branches {
			if id := fmt.Sprintf("branch%04d", i); id >= from && !yield(id, nil) {
				return
			}
		}
	}
}

func benchID(t uint32, counter uint32) xid.ID {
	var id xid.ID
	binary.BigEndian.PutUint32(id[0:4], t)
	copy(id[4:9], "lkgc1")
	id[9], id[10], id[11] = byte(counter>>16), byte(counter>>8), byte(counter)
	return id
}

type arena struct{ buf []byte }

func (a *arena) string(parts ...[]byte) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if len(a.buf)+n > cap(a.buf) {
		a.buf = make([]byte, 0, 64<<10)
	}
	start := len(a.buf)
	for _, p := range parts {
		a.buf = append(a.buf, p...)
	}
	return unsafe.String(&a.buf[start], n)
}

func (g genSource) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		var b int
		if _, err := fmt.Sscanf(branch, "branch%04d", &b); err != nil {
			yield(uncommitted.Entry{}, err)
			return
		}
		var a arena
		key := [8]byte{'k'}
		var slice, name [20]byte
		for i := range g.perBranch {
			n := b*g.perBranch + i
			for j, v := 7, i; j > 0; j, v = j-1, v/10 {
				key[j] = byte('0' + v%10)
			}
			k := a.string(key[:])
			if k < from {
				continue
			}
			benchID(uint32(4e9-n/50000), 0).Encode(slice[:])
			benchID(uint32(1.7e9+n/1000), uint32(n)).Encode(name[:])
			e := uncommitted.Entry{
				Key:             k,
				PhysicalAddress: a.string([]byte("data/"), slice[:], []byte("/"), name[:]),
				CreationDate:    time.Unix(int64(1.7e9+n/1000), 0),
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// lakeFSRow is lakeFS's UncommittedParquetObject, with its tags.
type lakeFSRow struct {
	PhysicalAddress string `parquet:"name=physical_address, type=BYTE_ARRAY, convertedtype=UTF8, encoding=PLAIN_DICTIONARY"`
	CreationDate    int64  `parquet:"name=creation_date, type=INT64, convertedtype=INT_64"`
}

// countingFile is lakeFS's UncommittedWriter: a local temporary file that
// counts the bytes written, for the size budget.
type countingFile struct {
	f    *os.File
	size int64
}

func (c *countingFile) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	c.size += int64(n)
	return n, err
}

const (
	lakeFSMaxFileSize = 20 << 20
	lakeFSFlushEvery  = 100000 // lakeFS's gcPeriodicCheckSize
)

// writeLakeFSStyle exports src the way lakeFS's gcWriteUncommitted does,
// one file per 20 MiB, each moved under dir/<folder> when complete. It
// returns the rows and bytes written.
func writeLakeFSStyle(dir, folder, namespace string, src uncommitted.Source) (rows, bytes int64, err error) {
	ctx := context.Background()
	ns := strings.TrimRight(namespace, "/") + "/"
	start := time.Now()
	var out *countingFile
	var pw *writer.ParquetWriter
	count := 0
	finish := func() error {
		if pw == nil {
			return nil
		}
		if err := pw.WriteStop(); err != nil {
			return err
		}
		if err := out.f.Close(); err != nil {
			return err
		}
		bytes += out.size
		if err := os.MkdirAll(filepath.Join(dir, folder), 0o755); err != nil {
			return err
		}
		pw = nil
		return os.Rename(out.f.Name(), filepath.Join(dir, folder, xid.New().String()))
	}
	for branch, err := range src.Branches(ctx, "") {
		if err != nil {
			return 0, 0, err
		}
		for e, err := range src.Uncommitted(ctx, branch, "") {
			if err != nil {
				return 0, 0, err
			}
			if e.Tombstone {
				continue
			}
			addr := e.PhysicalAddress
			if e.AddressType == uncommitted.Full {
				if !strings.HasPrefix(addr, ns) {
					continue
				}
				addr = addr[len(ns):]
			}
			_ = time.Since(start) > time.Minute // lakeFS checks its time budget per row
			if pw != nil && out.size > lakeFSMaxFileSize {
				// lakeFS returns a mark here; the next call starts a file
				if err := finish(); err != nil {
					return 0, 0, err
				}
			}
			if pw == nil {
				f, err := os.CreateTemp(dir, "uncommitted-*")
				if err != nil {
					return 0, 0, err
				}
				out = &countingFile{f: f}
				if pw, err = writer.NewParquetWriterFromWriter(out, new(lakeFSRow), 1); err != nil {
					return 0, 0, err
				}
				pw.CompressionType = parquet.CompressionCodec_GZIP
				count = 0
			}
			count++
			if count%lakeFSFlushEvery == 0 {
				if err := pw.Flush(true); err != nil {
					return 0, 0, err
				}
			}
			if err := pw.Write(lakeFSRow{PhysicalAddress: addr, CreationDate: e.CreationDate.Unix()}); err != nil {
				return 0, 0, err
			}
			rows++
		}
	}
	return rows, bytes, finish()
}
