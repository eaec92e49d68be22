package retention

import (
	"bytes"
	"encoding/csv"
	"errors"
	"slices"
	"testing"
)

// FuzzReadCommitsCSV checks the reader of commits reports against a simple
// model: it accepts exactly the reports whose every row is a commit ID,
// "true" or "false", and a metarange ID under lakeFS's header, and then
// returns every row not expired, in order — never dropping one; every
// refusal wraps ErrInvalidCommitsCSV.
func FuzzReadCommitsCSV(f *testing.F) {
	for _, s := range []string{
		"commit_id,expired,metarange_id\nc1,false,m1\nc2,true,m2\nc3,false,\n",
		"commit_id,expired,metarange_id\n",
		"commit_id,expired,metarange_id\r\nc1,false,m1\r\n",
		"commit_id,expired,metarange_id\n\"c,1\",false,\"m\"\"1\"\n",
		"commit_id,expired,metarange_id\n\"c\n1\",false,m1\n",
		"commit_id,expired,metarange_id\nc1,maybe,m1\n",
		"commit_id,expired,metarange_id\n,false,m1\n",
		"commit_id,expired,metarange_id\nc1,false\n",
		"commit_id,expired,metarange_id\n\"c1,false,m1\n",
		"c1,false,m1\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ReadCommitsCSV(bytes.NewReader(b))
		want, ok := modelCommitsCSV(b)
		if !ok {
			if err == nil || !errors.Is(err, ErrInvalidCommitsCSV) {
				t.Fatalf("%q: got %+v, %v; want an error wrapping ErrInvalidCommitsCSV", b, got, err)
			}
			return
		}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%q: got %+v, %v; want %+v", b, got, err, want)
		}
	})
}

// modelCommitsCSV is ReadCommitsCSV's contract, read with encoding/csv
// whole.
func modelCommitsCSV(b []byte) ([]ActiveCommit, bool) {
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) == 0 || !slices.Equal(rows[0], []string{"commit_id", "expired", "metarange_id"}) {
		return nil, false
	}
	var active []ActiveCommit
	for _, r := range rows[1:] {
		if len(r) != 3 || r[0] == "" || (r[1] != "true" && r[1] != "false") {
			return nil, false
		}
		if r[1] == "false" {
			active = append(active, ActiveCommit{CommitID: r[0], MetaRangeID: r[2]})
		}
	}
	// A record longer than the bound is refused whatever it holds.
	cr := csv.NewReader(bytes.NewReader(b))
	var end int64
	for {
		if _, err := cr.Read(); err != nil {
			break
		}
		if cr.InputOffset()-end > MaxCommitsCSVRecord {
			return nil, false
		}
		end = cr.InputOffset()
	}
	return active, true
}
