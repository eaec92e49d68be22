package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/lakegc/lakegc/pathprovider"
	"github.com/parquet-go/parquet-go"
)

// t0 is the benchmark's "now": Mark's clock and the export's start. Every
// listed object was modified at modTime, long before the cutoff
// (t0 − 24 h − 5 min with Mark's defaults), and every slice started
// 100 hours or more before t0, so age protects nothing and the candidates
// are exactly the listed keys that are not kept.
var (
	t0      = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	modTime = t0.Add(-200 * time.Hour)
)

// layout is the generated namespace: slices × perSlice objects with keys
// data/<slice>/o<18 digits>0, the shape of sweep's BenchmarkMark: the name
// is a valid xid (its last character holds four padding bits, which must be
// zero), so Mark recognizes every key as lakeFS's and judges it. Object n
// (n = slice index × perSlice + j, slices in ascending name order) is kept
// by the uncommitted export when n%40 == 1, by the commits when n%4 != 0
// and n%40 != 1, and is garbage (a candidate) when n%4 == 0: a quarter.
type layout struct {
	Slices   int `json:"slices"`
	PerSlice int `json:"per_slice"`

	names []string // slice names, ascending
}

func newLayout(keys, nSlices int) (*layout, error) {
	if nSlices <= 0 || keys <= 0 || keys%nSlices != 0 {
		return nil, fmt.Errorf("duckbench: %d keys do not divide into %d slices", keys, nSlices)
	}
	if int64(keys/nSlices) > maxPerSlice {
		return nil, fmt.Errorf("duckbench: %d keys a slice, more than the %d an 18-digit name numbers", keys/nSlices, maxPerSlice)
	}
	l := &layout{Slices: nSlices, PerSlice: keys / nSlices}
	for i := range nSlices {
		// Slice i started 100+i hours before t0, named as lakeFS names a
		// slice (pathprovider.DescendingID). The xid's other bytes are
		// fixed, not the machine's and process's, so every run names the
		// slices alike.
		id := pathprovider.DescendingID(t0.Add(-time.Duration(100+i) * time.Hour))
		binary.BigEndian.PutUint64(id[4:], uint64(i)*0x9E3779B97F4A7C15)
		l.names = append(l.names, id.String())
	}
	slices.Sort(l.names)
	return l, nil
}

// maxPerSlice is the most objects a slice holds: their names number them
// in 18 digits.
const maxPerSlice int64 = 1e18

func (l *layout) total() int { return l.Slices * l.PerSlice }

// appendKey appends the key of object j of slice i: "o", j in 18 digits and
// a '0' that makes the name an xid Mark recognizes (a name ending in another
// digit is no xid, never a candidate).
func (l *layout) appendKey(buf []byte, i, j int) []byte {
	buf = append(buf, "data/"...)
	buf = append(buf, l.names[i]...)
	buf = append(buf, "/o"...)
	n := len(buf)
	buf = strconv.AppendInt(buf, int64(j), 10)
	digits := len(buf) - n
	buf = append(buf[:n], "000000000000000000"[:18-digits]...)
	buf = strconv.AppendInt(buf, int64(j), 10)
	return append(buf, '0')
}

func isUncommitted(n int) bool { return n%40 == 1 }
func isCommitted(n int) bool   { return n%4 != 0 && n%40 != 1 }
func isCandidate(n int) bool   { return n%4 == 0 }

// keepSeq yields the keys of the objects that keep(n) selects in a
// scattered order (a stride coprime with the total), as a commit's
// addresses come: ordered by logical path, not by address.
func (l *layout) keepSeq(keep func(n int) bool) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		total := l.total()
		stride := 7919 // prime
		for total%stride == 0 {
			stride += 2
		}
		var buf []byte
		n := 0
		for range total {
			n = (n + stride) % total
			if !keep(n) {
				continue
			}
			buf = l.appendKey(buf[:0], n/l.PerSlice, n%l.PerSlice)
			if !yield(string(buf), nil) {
				return
			}
		}
	}
}

// candidates yields the expected candidates in ascending order: the model
// both engines are checked against.
func (l *layout) candidates() iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var buf []byte
		for i := range l.Slices {
			for j := range l.PerSlice {
				if !isCandidate(i*l.PerSlice + j) {
					continue
				}
				buf = l.appendKey(buf[:0], i, j)
				if !yield(string(buf), nil) {
					return
				}
			}
		}
	}
}

// listRow is a row of a listing file, as an inventory of the bucket would
// hold it.
type listRow struct {
	Address      string    `parquet:"address"`
	LastModified time.Time `parquet:"last_modified,timestamp(millisecond)"`
}

// keepRow is a row of a keep file.
type keepRow struct {
	Address string `parquet:"address"`
}

// Input files under a benchmark directory.
const (
	listingDir      = "listing" // one <slice>.parquet per slice, keys ascending
	uncommittedFile = "keep/uncommitted.parquet"
	committedFile   = "keep/committed.parquet"
	manifestFile    = "inputs.json"
	rowsPerGroup    = 128 << 10
	inputsFormat    = 2 // the version of the files' layout; bump it when they change (2: keys o<18 digits>0, valid xids)
)

// writeInputs writes the listing and the keep set of l under dir, unless a
// manifest there says they are already written for the same layout.
func writeInputs(dir string, l *layout) (reused bool, err error) {
	// The manifest names the layout and the format of the files, so that
	// inputs written by an older version of this command are rewritten.
	want, _ := json.Marshal(struct {
		Format int `json:"format"`
		*layout
		ModTime time.Time `json:"mod_time"`
	}{inputsFormat, l, modTime})
	if got, err := os.ReadFile(filepath.Join(dir, manifestFile)); err == nil && string(got) == string(want) {
		return true, nil
	}
	for _, sub := range []string{listingDir, "keep"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return false, err
		}
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return false, err
		}
	}
	_ = os.Remove(filepath.Join(dir, manifestFile))
	rows := make([]listRow, 0, 4096)
	var buf []byte
	for i, name := range l.names {
		err := writeParquet(filepath.Join(dir, listingDir, name+".parquet"), func(w *parquet.GenericWriter[listRow]) error {
			for j := range l.PerSlice {
				buf = l.appendKey(buf[:0], i, j)
				rows = append(rows, listRow{Address: string(buf), LastModified: modTime})
				if len(rows) == cap(rows) || j == l.PerSlice-1 {
					if _, err := w.Write(rows); err != nil {
						return err
					}
					rows = rows[:0]
				}
			}
			return nil
		})
		if err != nil {
			return false, err
		}
	}
	for file, keep := range map[string]func(int) bool{uncommittedFile: isUncommitted, committedFile: isCommitted} {
		err := writeParquet(filepath.Join(dir, file), func(w *parquet.GenericWriter[keepRow]) error {
			batch := make([]keepRow, 0, 4096)
			for k, err := range l.keepSeq(keep) {
				if err != nil {
					return err
				}
				batch = append(batch, keepRow{Address: k})
				if len(batch) == cap(batch) {
					if _, err := w.Write(batch); err != nil {
						return err
					}
					batch = batch[:0]
				}
			}
			_, err := w.Write(batch)
			return err
		})
		if err != nil {
			return false, err
		}
	}
	return false, os.WriteFile(filepath.Join(dir, manifestFile), want, 0o644)
}

// writeParquet writes one Snappy-compressed Parquet file with fill.
func writeParquet[T any](name string, fill func(*parquet.GenericWriter[T]) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[T](f, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(rowsPerGroup))
	err = fill(w)
	if err == nil {
		err = w.Close()
	}
	return errors.Join(err, f.Close())
}

// readAddresses yields the address column of a Parquet file, in file order.
func readAddresses(name string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		f, pf, err := openParquet(name)
		if err != nil {
			yield("", err)
			return
		}
		defer f.Close()
		r, err := openColumn(name, pf, "address")
		if err != nil {
			yield("", err)
			return
		}
		defer r.close()
		for {
			v, ok, err := r.bytes()
			if err != nil {
				yield("", err)
				return
			}
			if !ok || !yield(string(v), nil) {
				return
			}
		}
	}
}
