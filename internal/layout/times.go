package layout

import (
	"errors"
	"fmt"
	"time"
)

// The times of the GC's records (summary.json and sweep.json of a run, a
// quarantine's record): written in UTC, in whole seconds, as
// "2006-01-02T15:04:05Z"; read as RFC 3339 with any offset and fraction, or
// without an offset (as a JVM's LocalDateTime prints them: UTC), in the
// years 1 to 9999.

// recordTime is the layout of a record's time as written.
const recordTime = "2006-01-02T15:04:05Z"

// FormatTime returns t as a record's time; "" for the zero time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Truncate(time.Second).Format(recordTime)
}

// ParseTime reads a record's time, in UTC; "" is the zero time. An error is
// time.Parse's of RFC 3339, or says that the year is out of range.
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		var lerr error
		if t, lerr = time.Parse("2006-01-02T15:04:05.999999999", s); lerr != nil {
			return time.Time{}, err
		}
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("%w: year %d", errTimeRange, y)
	}
	return t.UTC(), nil
}

var errTimeRange = errors.New("out of range")
