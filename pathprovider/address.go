package pathprovider

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/xid"
)

// ErrInvalidAddress is wrapped by every error of Parse and ResolvePathTime.
var ErrInvalidAddress = errors.New("pathprovider: invalid address")

// year4000 is 4000-01-01T00:00:00Z in Unix seconds: the point lakeFS mirrors
// slice times around. It is part of the on-storage format and never changes.
const year4000 = 64060588800

// encodedLen is the length of an xid's string form.
const encodedLen = 20

// DescendingID returns an xid whose time part is 4000-01-01 minus t, so the
// IDs of later times sort first. Within one second the order is that of
// xid's counter.
//
// An xid keeps 32 bits of seconds, so the stored value is
// uint32(64060588800 - t): the reversal point is 64060588800 mod 2^32, that is
// 2094-07-27T05:24:16Z. IDs of times after it wrap to the top of the range and
// sort after every earlier one, as in lakeFS.
func DescendingID(t time.Time) xid.ID {
	return xid.NewWithTime(time.Unix(year4000-t.Unix(), 0))
}

// DescendingTime returns the time a DescendingID was made for, to the second.
// Times are only recovered modulo 2^32 seconds: exact from 1970 to 2106.
func DescendingTime(id xid.ID) time.Time {
	return time.Unix(int64(uint32(year4000-id.Time().Unix())), 0).UTC()
}

// Address is a parsed address "<prefix>/<slice>/<name>".
type Address struct {
	Prefix     string    // everything before the slice; may hold '/'
	Slice      string    // a DescendingID, 20 characters
	Name       string    // an xid, 20 characters
	SliceTime  time.Time // when the slice started, to the second (UTC)
	ObjectTime time.Time // when the address was made, to the second (UTC)
}

// Parse splits address into prefix, slice and name, splitting at the last two
// '/' so the prefix may hold '/' (a full URI such as s3://bucket/repo/data
// too), and decodes both times. It accepts addresses made by Partitioned and
// by lakeFS, and rejects anything that is not a non-empty prefix, a 20-character
// xid and a 20-character xid. Errors wrap ErrInvalidAddress.
func Parse(address string) (Address, error) {
	rest, name, ok := cutLast(address)
	if !ok {
		return Address{}, fmt.Errorf("%w: %q has no '/'", ErrInvalidAddress, clip(address))
	}
	prefix, sliceName, ok := cutLast(rest)
	if !ok || prefix == "" {
		return Address{}, fmt.Errorf("%w: %q is not <prefix>/<slice>/<name>", ErrInvalidAddress, clip(address))
	}
	if strings.HasSuffix(prefix, "/") {
		return Address{}, fmt.Errorf("%w: %q has an empty path element before the slice", ErrInvalidAddress, clip(address))
	}
	sliceID, err := parseID(sliceName, "slice")
	if err != nil {
		return Address{}, err
	}
	nameID, err := parseID(name, "object name")
	if err != nil {
		return Address{}, err
	}
	return Address{
		Prefix:     prefix,
		Slice:      sliceName,
		Name:       name,
		SliceTime:  DescendingTime(sliceID),
		ObjectTime: nameID.Time().UTC(),
	}, nil
}

// cutLast splits s around its last '/'.
func cutLast(s string) (before, after string, found bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// parseID decodes the canonical string form of an xid; what names the part
// of the address for the error.
func parseID(s, what string) (xid.ID, error) {
	if len(s) != encodedLen {
		return xid.ID{}, fmt.Errorf("%w: %s %q is not a 20-character xid", ErrInvalidAddress, what, clip(s))
	}
	id, err := xid.FromString(s)
	if err != nil {
		return xid.ID{}, fmt.Errorf("%w: %s %q is not an xid", ErrInvalidAddress, what, s)
	}
	return id, nil
}

// clip shortens s for an error message, so a huge input does not make a huge
// error.
func clip(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}
