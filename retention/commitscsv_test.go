package retention

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"gocloud.dev/blob/memblob"
)

func TestReadCommitsCSV(t *testing.T) {
	got, err := ReadCommitsCSV(strings.NewReader("commit_id,expired,metarange_id\nc1,false,m1\nc2,true,m2\nc3,false,\n"))
	if err != nil || !slices.Equal(got, []ActiveCommit{{CommitID: "c1", MetaRangeID: "m1"}, {CommitID: "c3"}}) {
		t.Errorf("ReadCommitsCSV = %+v, %v", got, err)
	}
	for name, in := range map[string]string{
		"empty":          "",
		"no header":      "c1,false,m1\n",
		"bad expired":    "commit_id,expired,metarange_id\nc1,maybe,m1\n",
		"short row":      "commit_id,expired,metarange_id\nc1,false\n",
		"no commit ID":   "commit_id,expired,metarange_id\n,false,m1\n",
		"bad quote":      "commit_id,expired,metarange_id\n\"c1,false,m1\n",
		"extra column":   "commit_id,expired,metarange_id\nc1,false,m1,x\n",
		"other header":   "commit,expired,metarange\nc1,false,m1\n",
		"header reorder": "expired,commit_id,metarange_id\nfalse,c1,m1\n",
		"before v0.100":  "commit_id,expired\nc1,false\nc2,true\n",
		"BOM":            "\ufeffcommit_id,expired,metarange_id\nc1,false,m1\n",
		"long record":    "commit_id,expired,metarange_id\nc1,false," + strings.Repeat("m", MaxCommitsCSVRecord-len("c1,false,\n")+1) + "\n",
		"huge record":    "commit_id,expired,metarange_id\nc1,false," + strings.Repeat("m", 3*MaxCommitsCSVRecord) + "\n",
		"long quoted":    "commit_id,expired,metarange_id\n\"" + strings.Repeat("c\n", MaxCommitsCSVRecord/2+1) + "\",false,m\n",
	} {
		if got, err := ReadCommitsCSV(strings.NewReader(in)); !errors.Is(err, ErrInvalidCommitsCSV) || got != nil {
			t.Errorf("%s: %d commits, %v; want an error wrapping ErrInvalidCommitsCSV", name, len(got), err)
		} else if !strings.HasPrefix(err.Error(), "retention: ") {
			t.Errorf("%s: error %q does not name the package", name, err)
		}
	}
	// A row at the bound is read.
	long := strings.Repeat("m", MaxCommitsCSVRecord-len("c1,false,\n"))
	if got, err := ReadCommitsCSV(strings.NewReader("commit_id,expired,metarange_id\nc1,false," + long + "\n")); err != nil || len(got) != 1 || got[0].MetaRangeID != long {
		t.Errorf("a record of %d bytes: %v", MaxCommitsCSVRecord, err)
	}
	// An endless record is refused after a bounded read, not held whole.
	endless := &countingReader{r: io.MultiReader(strings.NewReader("commit_id,expired,metarange_id\nc1,false,\""), endlessM{})}
	if _, err := ReadCommitsCSV(endless); !errors.Is(err, ErrInvalidCommitsCSV) || endless.n > 2*MaxCommitsCSVRecord {
		t.Errorf("endless record: %v after reading %d bytes", err, endless.n)
	}
	// A failed read is the reader's error, not a report of fewer commits.
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("commit_id,expired,metarange_id\nc1,false,m1\n"), iotest.ErrReader(boom))
	if got, err := ReadCommitsCSV(r); !errors.Is(err, boom) || errors.Is(err, ErrInvalidCommitsCSV) || got != nil {
		t.Errorf("failed read: %+v, %v", got, err)
	}
}

// What WriteCommitsCSV writes, ReadCommitsCSV reads back, whatever the IDs
// hold (commas, quotes, line breaks).
func TestCommitsCSVRoundTrip(t *testing.T) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	for n := range 50 {
		var active []ActiveCommit
		for i := range n {
			active = append(active, ActiveCommit{CommitID: fmt.Sprintf("c%d,\"x\"\n%d", i, n), MetaRangeID: strings.Repeat("m", i%3)})
		}
		key, err := WriteCommitsCSV(t.Context(), bucket, "_lakefs", fmt.Sprintf("run%d", n), active)
		if err != nil {
			t.Fatal(err)
		}
		b, err := bucket.ReadAll(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadCommitsCSV(bytes.NewReader(b))
		if err != nil || !slices.Equal(got, active) {
			t.Fatalf("%d commits: read back %+v, %v", n, got, err)
		}
	}
}

// endlessM reads as an endless run of 'm'.
type endlessM struct{}

func (endlessM) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'm'
	}
	return len(p), nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
