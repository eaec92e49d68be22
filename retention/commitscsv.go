package retention

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrInvalidCommitsCSV is wrapped by every error of [ReadCommitsCSV] about
// its input's content (not about reading it).
var ErrInvalidCommitsCSV = errors.New("retention: invalid commits report")

// MaxCommitsCSVRecord bounds a record of a commits report read by
// [ReadCommitsCSV]: its bytes from the end of the record before it (empty
// lines, fields, quotes) through its line break. lakeFS's commit and
// metarange IDs are 64 hex digits, so a row a thousand times that is not
// lakeFS's; it is refused before more than this bound and a read buffer of
// it is held in memory.
const MaxCommitsCSVRecord = 64 << 10

// ReadCommitsCSV reads a commits report — lakeFS's, as its prepare_commits
// writes it, or one of [WriteCommitsCSV] — and returns the commits it keeps,
// in the order of its rows.
//
// The report is a CSV file (RFC 4180, as encoding/csv reads it) whose
// header is commit_id,expired,metarange_id and whose every row is a
// non-empty commit ID, "true" or "false", and a metarange ID (possibly
// empty). The rows whose expired is "false" are the kept commits. Anything
// else — an empty input, another header, a row of another width or with
// another expired, a record longer than [MaxCommitsCSVRecord] — is an error
// wrapping [ErrInvalidCommitsCSV], with the line it is on; nothing is
// returned then, for a report read in part would leave kept commits out.
// lakeFS writes this header since v0.100 (its csv.Writer: no quotes
// around IDs, "\n" line ends, kept rows only in current versions); the
// reports of older versions have no metarange_id column and are refused.
// An error of r is returned as is, wrapped.
func ReadCommitsCSV(r io.Reader) ([]ActiveCommit, error) {
	// The csv.Reader reads r through a buffer of bufSize: a record of up
	// to MaxCommitsCSVRecord bytes takes at most that and a buffer's read
	// ahead from r, so lr trips on longer records only, before they are
	// held whole; the record's size is then checked exactly.
	lr := &recordLimit{r: r, left: MaxCommitsCSVRecord + bufSize}
	cr := csv.NewReader(bufio.NewReaderSize(lr, bufSize))
	cr.FieldsPerRecord = 3
	cr.ReuseRecord = true
	var end int64 // offset of the end of the last record read
	invalid := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%w: %w", ErrInvalidCommitsCSV, err)
		}
		if errors.Is(err, errRecordTooLong) {
			return fmt.Errorf("%w: the record after byte %d is longer than %d bytes", ErrInvalidCommitsCSV, end, MaxCommitsCSVRecord)
		}
		return fmt.Errorf("retention: read commits report: %w", err)
	}
	read := func() ([]string, error) {
		lr.left = MaxCommitsCSVRecord + bufSize
		rec, err := cr.Read()
		if err == nil && cr.InputOffset()-end > MaxCommitsCSVRecord {
			err = errRecordTooLong
		}
		if err == nil {
			end = cr.InputOffset()
		}
		return rec, err
	}
	head, err := read()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: empty, no header", ErrInvalidCommitsCSV)
	}
	if err != nil {
		return nil, invalid(err)
	}
	if head[0] != "commit_id" || head[1] != "expired" || head[2] != "metarange_id" {
		return nil, fmt.Errorf("%w: header %q, want commit_id,expired,metarange_id", ErrInvalidCommitsCSV, head)
	}
	var active []ActiveCommit
	for {
		rec, err := read()
		if err == io.EOF {
			return active, nil
		}
		if err != nil {
			return nil, invalid(err)
		}
		line, _ := cr.FieldPos(0)
		if rec[0] == "" {
			return nil, fmt.Errorf("%w: line %d: a row without a commit ID", ErrInvalidCommitsCSV, line)
		}
		switch rec[1] {
		case "false":
			// Clones: the record's fields share one string, kept whole
			// by any field held.
			active = append(active, ActiveCommit{CommitID: strings.Clone(rec[0]), MetaRangeID: strings.Clone(rec[2])})
		case "true":
		default:
			return nil, fmt.Errorf("%w: line %d: commit %q: expired is %q, not true or false", ErrInvalidCommitsCSV, line, rec[0], rec[1])
		}
	}
}

// bufSize is the read buffer of ReadCommitsCSV.
const bufSize = 4 << 10

var errRecordTooLong = errors.New("record too long")

// recordLimit fails a read once more than left bytes were read since left
// was last set.
type recordLimit struct {
	r    io.Reader
	left int
}

func (l *recordLimit) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errRecordTooLong
	}
	n, err := l.r.Read(p[:min(len(p), l.left)])
	l.left -= n
	return n, err
}
