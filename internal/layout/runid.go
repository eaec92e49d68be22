package layout

import (
	"time"

	"github.com/rs/xid"
)

// DescendingID returns an xid whose time part is ReversalPoint minus t, so
// the IDs of later times sort first; within one second the order is that
// of xid's counter. It names lakeFS's slices and its GC runs.
//
// An xid keeps 32 bits of seconds, so the stored value is
// uint32(ReversalPoint - t): the reversal point is ReversalPoint mod 2^32,
// 2094-07-27T05:24:16Z. IDs of times after it wrap to the top of the range
// and sort after every earlier one, as in lakeFS.
func DescendingID(t time.Time) xid.ID {
	return xid.NewWithTime(time.Unix(ReversalPoint-t.Unix(), 0))
}

// DescendingTime returns the time a DescendingID was made for, to the
// second, in UTC. Times are recovered modulo 2^32 seconds: exact from 1970
// to 2106.
func DescendingTime(id xid.ID) time.Time {
	return time.Unix(int64(uint32(ReversalPoint-id.Time().Unix())), 0).UTC()
}

// NewRunID returns a new, unique ID for a run started at now, made as lakeFS
// makes its run IDs: the string form of DescendingID(now). IDs descend: a
// run started a second or more later has a smaller ID, so a listing of runs
// in key order starts with the newest (until 2094, see DescendingID).
func NewRunID(now time.Time) string {
	return DescendingID(now).String()
}

// MaxRunIDLen is the longest run ID ValidRunID accepts.
const MaxRunIDLen = 128

// ValidRunID reports whether id is a run ID: a name of 1 to MaxRunIDLen
// letters, digits, '-', '_', '.' and '=' other than "." and "..", so one
// path element that names nothing outside its run's folder. It accepts
// NewRunID's IDs and lakeFS's (xids, UUIDs).
func ValidRunID(id string) bool {
	if id == "" || len(id) > MaxRunIDLen || id == "." || id == ".." {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '=':
		default:
			return false
		}
	}
	return true
}
