// Package layout is the one definition of the lakeFS storage layout that the
// other packages share: the default prefixes and their checks (ValidPrefix,
// PrefixesOverlap), slice names and their times (DescendingID, SliceTime),
// run IDs (NewRunID, ValidRunID), the paths of the retention/gc tree under
// the storage prefix (RunPath, CommitsKey, UncommittedFiles, RulesKey …)
// and the times its records hold (FormatTime, ParseTime),
// and which keys of a storage namespace have a shape that lakeFS (or a
// host's pathprovider) writes — the keys a garbage collector may ever
// delete (Recognize; Recognizer adds a host's rule and include prefixes;
// RecognizerRules versions the built-in rules) —
// and which folders are another repository's (Walls, WallCursor). Package
// nsaddr holds the one rule for full addresses; package namespace exports
// to hosts what they need of both. A test of this
// package fails when a literal of the layout ("_lakefs", "retention/gc",
// the year 4000, "data" as the value of a constant named as a prefix) or a
// hand-made parse at "://" appears in the code of any other package of the
// repository's modules.
//
// # Names in time
//
// lakeFS names a slice, and a GC run, by DescendingID of its start: the xid
// of ReversalPoint minus the time, so that a listing in key order starts
// with the newest. NewRunID makes such IDs; ValidRunID also accepts
// lakeFS's other run IDs (UUIDs), and refuses anything that is not one
// path element of a plain alphabet.
//
// # Shapes
//
// A key relative to the storage namespace is recognized when it has one of
// the shapes lakeFS has written for data objects, checked against lakeFS's
// source history:
//
//   - Slice: "<data>/<slice>/<xid>", where <slice> and <xid> are 20-character
//     xids (lakeFS's pkg/upload PathPartitionProvider, since lakeFS v0.86,
//     November 2022, PR #4530). lakegc's pathprovider writes the same.
//   - SignedSlice: "<data>/<slice>/<xid>,<signature>", the stored address of
//     an object uploaded to a signed link address (lakeFS PR #4900, January
//     2023): 43 characters of unpadded base64url after the ','.
//   - Flat: "<32 lowercase hex digits>" at the top level of the namespace:
//     hex(uuid) of every upload before PR #4530 (pkg/upload WriteBlob, the S3
//     gateway's multipart uploads). The UUIDs were google/uuid's New, random
//     ones: version 4 (the 13th digit is '4') of RFC 4122's variant (the
//     17th is one of 8, 9, a, b). Other hex names, such as MD5 digests, are
//     another writer's.
//   - EarlyLinked: "<data>/<token>/<nanoid>", the addresses lakeFS's
//     get-physical-address handed out from PR #1670 (March 2021) to PR
//     #4530: a 21-character nanoid (alphabet A-Za-z0-9_-) under the
//     branch's staging token, which was "<repository>-<branch>:<uuid>"
//     (a version 4 UUID in its canonical form) — and, from PR #1169
//     (January 2021) to PR #3755 (July 2022), "<repository>-<branch>-<uuid>"
//     once the branch had a commit (graveler's newStagingToken).
//     lakeFS always had a token for a branch, so it never handed out
//     "<data>/<nanoid>": a name of that shape directly under the data
//     folder is another writer's.
//
// Anything else — another name at the top level or under the data folder,
// an import source, another tenant's file, another repository's folder — is
// not recognized, and is never garbage by its shape.
package layout

import (
	"strings"
	"time"

	"github.com/rs/xid"
)

// Defaults of lakeFS's layout.
const (
	// StoragePrefix is the folder of lakeFS's own files in a namespace.
	StoragePrefix = "_lakefs"
	// DataPrefix is the folder of the data slices.
	DataPrefix = "data"
	// MarkerName is the object lakeFS writes under StoragePrefix when it
	// creates a repository in a namespace ("_lakefs/dummy"); lakeFS before
	// v0.108 (August 2023, PR #6497) wrote it at the namespace's top level
	// ("dummy").
	MarkerName = "dummy"
)

// ReversalPoint is lakeFS's year 4000 (4000-01-01T00:00:00Z in Unix
// seconds): a slice and a run are named by DescendingID, the xid of
// ReversalPoint minus their start time, so newer ones sort first. It is part
// of the address format.
const ReversalPoint = 64060588800

// XIDLen is the length of an xid's string form.
const XIDLen = 20

// SignatureLen is the length of a linked object's signature: 32 bytes of
// HMAC-SHA256 in unpadded base64url.
const SignatureLen = 43

// SliceTime decodes the start time of a slice from its name; false when the
// name is not a 20-character xid. Times wrap modulo 2^32 seconds, as xid
// keeps 32 bits of seconds.
func SliceTime(name string) (time.Time, bool) {
	if len(name) != XIDLen {
		return time.Time{}, false
	}
	id, err := xid.FromString(name)
	if err != nil {
		return time.Time{}, false
	}
	return DescendingTime(id), true
}

// Shape is the kind of a recognized key.
type Shape int

// The shapes of the keys lakeFS writes; see the package documentation.
const (
	Unrecognized Shape = iota
	Slice
	SignedSlice
	Flat
	EarlyLinked
)

var shapeNames = [...]string{"unrecognized", "slice", "signed slice", "flat", "early linked"}

// String names the shape.
func (s Shape) String() string {
	if s < 0 || int(s) >= len(shapeNames) {
		return "unknown shape"
	}
	return shapeNames[s]
}

// Recognize returns the shape of key, a key relative to the storage
// namespace, with data the data folder (without a trailing '/'), or
// Unrecognized. It allocates nothing.
func Recognize(key, data string) Shape {
	rest, ok := strings.CutPrefix(key, data)
	if !ok || data == "" || !strings.HasPrefix(rest, "/") {
		if isFlat(key) {
			return Flat
		}
		return Unrecognized
	}
	rest = rest[1:]
	first, second, nested := strings.Cut(rest, "/")
	if !nested {
		return Unrecognized
	}
	if strings.IndexByte(second, '/') >= 0 {
		return Unrecognized
	}
	if _, ok := SliceTime(first); ok {
		return InSlice(second)
	}
	if isStagingToken(first) && isNanoID(second) {
		return EarlyLinked
	}
	return Unrecognized
}

// InSlice returns the shape of name, the part of a key after
// "<data>/<slice>/" where <slice> is a slice's name: Slice, SignedSlice or
// Unrecognized, as Recognize says of the whole key. A caller that knows a
// folder is a slice checks its keys with it without decoding the slice's
// name again. It allocates nothing.
func InSlice(name string) Shape {
	id, sig, signed := strings.Cut(name, ",")
	switch {
	case !isXID(id):
		return Unrecognized
	case !signed:
		return Slice
	case IsSignature(sig):
		return SignedSlice
	}
	return Unrecognized
}

// Tail returns the recognized key at the end of path, a full address's path
// or any '/'-separated name: "<data>/<slice>/<xid>[,<signature>]" or
// "<data>/<token>/<nanoid>" where path ends with a '/' (or starts) just
// before <data>, or a Flat last element. ok is false when
// no such suffix is recognized. A full address outside a namespace whose
// tail is a key that the namespace's listing holds names that namespace's
// object in another spelling (the xids and UUIDs in these shapes are unique).
func Tail(path, data string) (key string, ok bool) {
	if data == "" {
		return "", false
	}
	// underData reports whether path[:i] ends with data as whole elements.
	underData := func(i int) bool {
		head := path[:i]
		return head == data || strings.HasSuffix(head, "/"+data)
	}
	i1 := strings.LastIndexByte(path, '/')
	if i1 < 0 {
		if isFlat(path) {
			return path, true
		}
		return "", false
	}
	if i2 := strings.LastIndexByte(path[:i1], '/'); i2 >= 0 && underData(i2) {
		k := path[i2-len(data):]
		if s := Recognize(k, data); s == Slice || s == SignedSlice || s == EarlyLinked {
			return k, true
		}
	}
	if last := path[i1+1:]; isFlat(last) {
		return last, true
	}
	return "", false
}

// isXID reports whether s is an xid's string form, as xid.FromString
// accepts it: 20 characters of base32hex in lower case (0-9a-v), the last
// of which holds one bit of the id and four zero bits ('0' or 'g').
func isXID(s string) bool {
	if len(s) != XIDLen || s[XIDLen-1] != '0' && s[XIDLen-1] != 'g' {
		return false
	}
	for i := 0; i < XIDLen-1; i++ {
		if !xidChar[s[i]] {
			return false
		}
	}
	return true
}

// xidChar holds the characters of base32hex in lower case.
var xidChar = func() (t [256]bool) {
	for _, c := range "0123456789abcdefghijklmnopqrstuv" {
		t[c] = true
	}
	return t
}()

// isFlat reports whether s is hex(uuid) of a random UUID: 32 lowercase hex
// digits, the version digit '4' and the variant digit one of 8, 9, a, b.
func isFlat(s string) bool {
	return len(s) == 32 && isHex(s) && isUUIDv4(s[12], s[16])
}

// isHex reports whether s is lowercase hex digits.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isUUIDv4 reports whether the version and variant digits of a UUID are
// those of a random one (RFC 4122 version 4).
func isUUIDv4(version, variant byte) bool {
	return version == '4' && (variant == '8' || variant == '9' || variant == 'a' || variant == 'b')
}

// isNanoID reports whether s is a default nanoid: 21 characters of
// A-Za-z0-9_-.
func isNanoID(s string) bool {
	return len(s) == 21 && isBase64URL(s)
}

// IsSignature reports whether s has the form of a linked object's
// signature: SignatureLen characters of unpadded base64url.
func IsSignature(s string) bool {
	return len(s) == SignatureLen && isBase64URL(s)
}

func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// isStagingToken reports whether s has the shape of an early graveler
// staging token, "<repository>-<branch>:<uuid>" or, after a commit or a
// reset before lakeFS PR #3755, "<repository>-<branch>-<uuid>": a name of
// A-Za-z0-9_- holding a '-', the separator, and a canonical lowercase UUID.
func isStagingToken(s string) bool {
	if len(s) < 5+1+36 { // a repository ID has 3 characters or more, a branch ID one
		return false
	}
	name, sep, id := s[:len(s)-37], s[len(s)-37], s[len(s)-36:]
	if sep != ':' && sep != '-' || !strings.Contains(name, "-") || !isBase64URL(name) || len(name) < 5 {
		return false
	}
	if len(id) != 36 || !isUUIDv4(id[14], id[19]) {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}
