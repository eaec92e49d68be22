package pathprovider

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/xid"

	"github.com/lakegc/lakegc/internal/layout"
)

// ErrInvalidAddress is wrapped by every error of Parse and ResolvePathTime.
var ErrInvalidAddress = errors.New("pathprovider: invalid address")

// ErrInvalidInput is wrapped by the error of New for a nil option or an
// option given an invalid value.
var ErrInvalidInput = errors.New("pathprovider: invalid input")

// encodedLen is the length of an xid's string form.
const encodedLen = layout.XIDLen

// DescendingID returns an xid whose time part is lakeFS's year 4000 minus t,
// so the IDs of later times sort first. Within one second the order is that
// of xid's counter.
//
// An xid keeps 32 bits of seconds, so the stored value wraps: the reversal
// point is 2094-07-27T05:24:16Z. IDs of times after it wrap to the top of
// the range and sort after every earlier one, as in lakeFS.
func DescendingID(t time.Time) xid.ID {
	return layout.DescendingID(t)
}

// DescendingTime returns the time a DescendingID was made for, to the second.
// Times are only recovered modulo 2^32 seconds: exact from 1970 to 2106.
func DescendingTime(id xid.ID) time.Time {
	return layout.DescendingTime(id)
}

// Address is a parsed address "<prefix>/<slice>/<name>", or the stored
// address of a linked object, "<prefix>/<slice>/<name>,<signature>".
type Address struct {
	Prefix string // everything before the slice; may hold '/'
	Slice  string // a DescendingID, 20 characters
	Name   string // an xid, 20 characters
	// Signature is the signature part of a linked object's stored address,
	// 43 characters of unpadded base64url (lakeFS's HMAC-SHA256, see
	// package linkaddr), or "" for an address without one. Parse does not
	// verify it.
	Signature  string
	SliceTime  time.Time // when the slice started, to the second (UTC)
	ObjectTime time.Time // when the address was made, to the second (UTC)
}

// String returns the address Parse read: Prefix/Slice/Name, with
// ",Signature" when there is a signature.
func (a Address) String() string {
	if a.Signature == "" {
		return a.Prefix + "/" + a.Slice + "/" + a.Name
	}
	return a.Prefix + "/" + a.Slice + "/" + a.Name + signatureDelimiter + a.Signature
}

// signatureDelimiter separates an address from its signature (linkaddr's
// Delimiter); layout.SignatureLen is the length of a signature.
const signatureDelimiter = ","

// Parse splits address into prefix, slice and name, splitting at the last two
// '/' so the prefix may hold '/' (a full URI such as s3://bucket/repo/data
// too), and decodes both times. It accepts addresses made by Partitioned and
// by lakeFS, and rejects anything that is not a non-empty prefix, a 20-character
// xid and a 20-character xid. Errors wrap ErrInvalidAddress.
//
// The name may be followed by "," and a signature of 43 base64url characters:
// lakeFS stores a linked object under the signed address the client uploaded
// to, data/<slice>/<xid>,<signature>. The object's time is still the xid's;
// the signature goes to Address.Signature, unverified.
func Parse(address string) (Address, error) {
	rest, last, ok := cutLast(address)
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
	nameID, name, signature, err := parseName(last)
	if err != nil {
		return Address{}, err
	}
	return Address{
		Prefix:     prefix,
		Slice:      sliceName,
		Name:       name,
		Signature:  signature,
		SliceTime:  DescendingTime(sliceID),
		ObjectTime: nameID.Time().UTC(),
	}, nil
}

// parseName decodes the last path element of an address: an xid, or an xid,
// ',' and a signature.
func parseName(s string) (id xid.ID, name, signature string, err error) {
	name, signature, signed := strings.Cut(s, signatureDelimiter)
	if signed && !layout.IsSignature(signature) {
		return xid.ID{}, "", "", fmt.Errorf("%w: signature %q is not 43 base64url characters", ErrInvalidAddress, clip(signature))
	}
	id, err = parseID(name, "object name")
	return id, name, signature, err
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
