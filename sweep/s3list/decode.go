package s3list

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	smithytime "github.com/aws/smithy-go/time"
)

// MaxPageBytes bounds the body of one page: 1000 keys of 1024 bytes, each
// byte written as a 10-byte character reference, fit with room to spare.
const MaxPageBytes = 32 << 20

// ErrMalformed is wrapped by every error about a body that is no
// ListObjectsV2 result: bad XML, a missing or unparsable field, a body over
// MaxPageBytes.
var ErrMalformed = errors.New("s3list: malformed listing")

// Object is one entry of a listing's Contents.
type Object struct {
	Key          string
	Size         int64
	LastModified time.Time
	ETag         string // as sent, quotes included; "" when absent
}

// Page is what DecodeListPage reads of a ListObjectsV2 result: the fields
// a listing needs, the others skipped.
type Page struct {
	Contents       []Object
	CommonPrefixes []string

	IsTruncated bool
	// NextContinuationToken is the token of the next page; HasNext says
	// whether the element was there (an empty one included).
	NextContinuationToken string
	HasNext               bool
	// KeyCount is the count S3 states, -1 when absent.
	KeyCount int64
	// EncodingType is "url" when S3 URL-encoded the keys, prefixes and
	// tokens (this package never asks it to).
	EncodingType string
}

// Decoder decodes ListObjectsV2 bodies, reusing its buffer from one body to
// the next. Its zero value is ready; it is not safe for concurrent use.
type Decoder struct {
	buf  []byte
	text []byte // decoded text, valid until the next
	// day is the midnight of the last timestamp's day, dayKey that day.
	day    time.Time
	dayKey [3]int
	// objs, when reuse is set, holds the Contents of the last page.
	objs  []Object
	reuse bool
	stack [][]byte // names of open elements, while skipping one
}

// DecodeListPage decodes one ListObjectsV2 result from r, reading it whole
// (at most MaxPageBytes).
func DecodeListPage(r io.Reader) (*Page, error) {
	var d Decoder
	return d.Decode(r)
}

// Decode reads r to its end (at most MaxPageBytes) and decodes it.
func (d *Decoder) Decode(r io.Reader) (*Page, error) {
	buf := d.buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxPageBytes {
			d.buf = buf[:0]
			return nil, fmt.Errorf("%w: body over %d bytes", ErrMalformed, MaxPageBytes)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			d.buf = buf[:0]
			return nil, fmt.Errorf("s3list: read page: %w", err)
		}
	}
	d.buf = buf[:0]
	if cap(buf) > MaxPageBytes/4 {
		d.buf = nil // do not hold on to an odd big page
	}
	return d.DecodeBytes(buf)
}

// DecodeBytes decodes one ListObjectsV2 result held in b. The page shares
// no memory with b.
func (d *Decoder) DecodeBytes(b []byte) (*Page, error) {
	if len(b) > MaxPageBytes {
		return nil, fmt.Errorf("%w: body over %d bytes", ErrMalformed, MaxPageBytes)
	}
	s := scanner{b: b, d: d}
	p, err := s.document()
	if err != nil {
		return nil, fmt.Errorf("%w: %v (at byte %d)", ErrMalformed, err, s.i)
	}
	return p, nil
}

// scanner reads XML from b at i. It knows just enough XML for S3's
// listings: a prolog of a declaration, comments and processing
// instructions, no DOCTYPE; elements with attributes; text with the five
// named entities and character references; CDATA.
type scanner struct {
	b []byte
	i int
	d *Decoder
}

var errEOF = errors.New("unexpected end of body")

func (s *scanner) document() (*Page, error) {
	name, empty, err := s.prolog()
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(local(name), "ListBucketResult") {
		return nil, fmt.Errorf("root element <%s>, not <ListBucketResult>", clip(name))
	}
	p := &Page{KeyCount: -1}
	if !empty {
		if err := s.result(p, name); err != nil {
			return nil, err
		}
	}
	// After the root: only space, comments, processing instructions.
	for {
		s.space()
		if s.i == len(s.b) {
			return p, nil
		}
		if err := s.misc(); err != nil {
			return nil, err
		}
	}
}

// prolog skips to the root element and reads its start tag.
func (s *scanner) prolog() (name []byte, empty bool, err error) {
	for {
		s.space()
		if s.i == len(s.b) {
			return nil, false, errEOF
		}
		if s.b[s.i] != '<' {
			return nil, false, errors.New("text before the root element")
		}
		if s.i+1 < len(s.b) && (s.b[s.i+1] == '?' || s.b[s.i+1] == '!') {
			if err := s.misc(); err != nil {
				return nil, false, err
			}
			continue
		}
		s.i++
		return s.startTag()
	}
}

// misc skips a comment or processing instruction at s.i.
func (s *scanner) misc() error {
	rest := s.b[s.i:]
	switch {
	case bytes.HasPrefix(rest, []byte("<?")):
		return s.skipPast("?>")
	case bytes.HasPrefix(rest, []byte("<!--")):
		s.i += 4
		end := bytes.Index(s.b[s.i:], []byte("--"))
		if end < 0 {
			return errEOF
		}
		s.i += end
		if !bytes.HasPrefix(s.b[s.i:], []byte("-->")) {
			return errors.New(`"--" in a comment`)
		}
		s.i += 3
		return nil
	case bytes.HasPrefix(rest, []byte("<!")):
		return errors.New("DOCTYPE or declaration not allowed")
	}
	return errors.New("unexpected content")
}

func (s *scanner) skipPast(end string) error {
	j := bytes.Index(s.b[s.i:], []byte(end))
	if j < 0 {
		s.i = len(s.b)
		return errEOF
	}
	s.i += j + len(end)
	return nil
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// startTag reads a start tag after its '<': its name, its attributes
// (skipped), and whether it closes itself.
func (s *scanner) startTag() (name []byte, empty bool, err error) {
	name = s.name()
	if len(name) == 0 {
		return nil, false, errors.New("element without a name")
	}
	for {
		s.space()
		if s.i == len(s.b) {
			return nil, false, errEOF
		}
		switch s.b[s.i] {
		case '>':
			s.i++
			return name, false, nil
		case '/':
			if s.i+1 < len(s.b) && s.b[s.i+1] == '>' {
				s.i += 2
				return name, true, nil
			}
			return nil, false, errors.New("'/' in a start tag")
		}
		if len(s.name()) == 0 {
			return nil, false, errors.New("bad attribute")
		}
		s.space()
		if s.i == len(s.b) || s.b[s.i] != '=' {
			return nil, false, errors.New("attribute without a value")
		}
		s.i++
		s.space()
		if s.i == len(s.b) {
			return nil, false, errEOF
		}
		q := s.b[s.i]
		if q != '"' && q != '\'' {
			return nil, false, errors.New("unquoted attribute value")
		}
		s.i++
		j := bytes.IndexByte(s.b[s.i:], q)
		if j < 0 {
			return nil, false, errEOF
		}
		if bytes.IndexByte(s.b[s.i:s.i+j], '<') >= 0 {
			return nil, false, errors.New("'<' in an attribute value")
		}
		s.i += j + 1
	}
}

// name reads an XML name (loosely: up to a byte that ends one).
func (s *scanner) name() []byte {
	j := s.i
	for j < len(s.b) && !nameEnd[s.b[j]] {
		j++
	}
	n := s.b[s.i:j]
	s.i = j
	return n
}

// local is the local part of an element's name, as encoding/xml splits it.
func local(name []byte) string {
	if i := bytes.IndexByte(name, ':'); i >= 1 && i < len(name)-1 {
		return string(name[i+1:])
	}
	return string(name)
}

// Fields of a listing the decoder reads.
const (
	fOther = iota
	fContents
	fCommonPrefixes
	fIsTruncated
	fNextContinuationToken
	fKeyCount
	fEncodingType
	fKey
	fSize
	fLastModified
	fETag
	fPrefix
)

var fieldNames = [...]string{
	fContents: "Contents", fCommonPrefixes: "CommonPrefixes", fIsTruncated: "IsTruncated",
	fNextContinuationToken: "NextContinuationToken", fKeyCount: "KeyCount", fEncodingType: "EncodingType",
	fKey: "Key", fSize: "Size", fLastModified: "LastModified", fETag: "ETag", fPrefix: "Prefix",
}

// fieldOf says which field an element's name is: its local part, ASCII
// case ignored, as the SDK matches names (strings.EqualFold, which also
// folds some non-ASCII letters, as 'K' for "K").
func fieldOf(name []byte) int {
	switch string(name) {
	case "Key":
		return fKey
	case "Size":
		return fSize
	case "LastModified":
		return fLastModified
	case "ETag":
		return fETag
	case "Contents":
		return fContents
	case "StorageClass", "ChecksumAlgorithm", "ChecksumType", "Owner", "Name", "MaxKeys", "ContinuationToken", "Delimiter", "StartAfter":
		return fOther
	}
	if i := bytes.IndexByte(name, ':'); i >= 1 && i < len(name)-1 {
		name = name[i+1:]
	}
	for f, want := range fieldNames {
		if want != "" && strings.EqualFold(string(name), want) {
			return f
		}
	}
	return fOther
}

// children reads the content of element name up to its end tag, calling f
// for each child element (after its start tag). Text between children is
// skipped, as the SDK does.
func (s *scanner) children(name []byte, f func(child []byte, empty bool) error) error {
	for {
		j := bytes.IndexByte(s.b[s.i:], '<')
		if j < 0 {
			s.i = len(s.b)
			return errEOF
		}
		if _, err := s.text(s.i + j); err != nil {
			return err
		}
		s.i += j
		rest := s.b[s.i:]
		var next byte
		if len(rest) > 1 {
			next = rest[1]
		}
		switch {
		case next == '/':
			return s.endTag(name)
		case next != '!' && next != '?':
			s.i++
			child, empty, err := s.startTag()
			if err != nil {
				return err
			}
			if err := f(child, empty); err != nil {
				return err
			}
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			s.i += 9
			if err := s.skipPast("]]>"); err != nil {
				return err
			}
		default:
			if err := s.misc(); err != nil {
				return err
			}
		}
	}
}

// endTag reads "</name>" at s.i.
func (s *scanner) endTag(name []byte) error {
	if e := s.i + 2 + len(name); e < len(s.b) && s.b[e] == '>' && bytes.Equal(s.b[s.i+2:e], name) {
		s.i = e + 1
		return nil
	}
	s.i += 2
	got := s.name()
	s.space()
	if s.i == len(s.b) || s.b[s.i] != '>' {
		return errors.New("bad end tag")
	}
	s.i++
	if !bytes.Equal(got, name) {
		return fmt.Errorf("<%s> closed by </%s>", clip(name), clip(got))
	}
	return nil
}

// skip skips the rest of element name, whose start tag was just read.
func (s *scanner) skip(name []byte, empty bool) error {
	if empty {
		return nil
	}
	// Fast path: a leaf of text.
	if j := bytes.IndexByte(s.b[s.i:], '<'); j >= 0 && bytes.HasPrefix(s.b[s.i+j:], []byte("</")) {
		if _, err := s.text(s.i + j); err != nil {
			return err
		}
		s.i += j
		return s.endTag(name)
	}
	stack := append(s.d.stack[:0], name)
	defer func() { s.d.stack = stack[:0] }()
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		var child []byte
		var childEmpty bool
		err := s.children(top, func(c []byte, e bool) error {
			child, childEmpty = c, e
			return errDescend
		})
		switch {
		case err == nil:
			stack = stack[:len(stack)-1]
		case err == errDescend:
			if !childEmpty {
				if len(stack) >= 256 {
					return errors.New("elements nested too deep")
				}
				stack = append(stack, child)
			}
		default:
			return err
		}
	}
	return nil
}

var errDescend = errors.New("descend")

// value reads the text of element name, whose start tag was just read: one
// run of text or one CDATA section, then the end tag, as the SDK's
// decoder wants it. The text is decoded; it may share memory with the body.
func (s *scanner) value(name []byte, empty bool) ([]byte, error) {
	if empty {
		return nil, nil
	}
	if bytes.HasPrefix(s.b[s.i:], []byte("<![CDATA[")) {
		start := s.i + 9
		j := bytes.Index(s.b[start:], []byte("]]>"))
		if j < 0 {
			s.i = len(s.b)
			return nil, errEOF
		}
		raw := s.b[start : start+j]
		s.i = start + j + 3
		if !bytes.HasPrefix(s.b[s.i:], []byte("</")) {
			return nil, fmt.Errorf("<%s> holds more than one value", clip(name))
		}
		v, err := checkRaw(raw)
		if err != nil {
			return nil, err
		}
		return v, s.endTag(name)
	}
	j := bytes.IndexByte(s.b[s.i:], '<')
	if j < 0 {
		s.i = len(s.b)
		return nil, errEOF
	}
	end := s.i + j
	if !bytes.HasPrefix(s.b[end:], []byte("</")) {
		return nil, fmt.Errorf("<%s> holds more than text", clip(name))
	}
	v, err := s.text(end)
	if err != nil {
		return nil, err
	}
	s.i = end
	return v, s.endTag(name)
}

// checkRaw checks CDATA content as encoding/xml does (valid characters;
// "\r\n" and "\r" read as "\n") and returns it as a string.
func checkRaw(raw []byte) ([]byte, error) {
	var out []byte
	for k := 0; k < len(raw); {
		c := raw[k]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return nil, fmt.Errorf("illegal character code %U", rune(c))
			}
			if c == '\r' {
				if out == nil {
					out = append(make([]byte, 0, len(raw)), raw[:k]...)
				}
				out = append(out, '\n')
				k++
				if k < len(raw) && raw[k] == '\n' {
					k++
				}
				continue
			}
			if out != nil {
				out = append(out, c)
			}
			k++
			continue
		}
		r, n := utf8.DecodeRune(raw[k:])
		if r == utf8.RuneError && n == 1 {
			return nil, errors.New("invalid UTF-8")
		}
		if !inRange(r) {
			return nil, fmt.Errorf("illegal character code %U", r)
		}
		if out != nil {
			out = append(out, raw[k:k+n]...)
		}
		k += n
	}
	if out == nil {
		return raw, nil
	}
	return out, nil
}

// text checks the text from s.i to end and returns it decoded: entities
// and character references replaced, line ends normalized.
func (s *scanner) text(end int) ([]byte, error) {
	raw := s.b[s.i:end]
	// Fast path: nothing to replace or check byte by byte.
	plain := true
	for _, c := range raw {
		if special[c] {
			plain = false
			break
		}
	}
	if plain {
		return raw, nil
	}
	out, err := decodeText(s.d.text[:0], raw)
	s.d.text = out[:0]
	return out, err
}

// decodeText appends raw, decoded, to out.
func decodeText(out, raw []byte) ([]byte, error) {
	for k := 0; k < len(raw); {
		// Copy the run of plain bytes at k at once.
		j := k
		for j < len(raw) && !special[raw[j]] {
			j++
		}
		out = append(out, raw[k:j]...)
		if k = j; k == len(raw) {
			break
		}
		c := raw[k]
		switch {
		case c == '&':
			semi := bytes.IndexByte(raw[k:], ';')
			if semi < 0 {
				return nil, errors.New("unterminated entity")
			}
			ent := raw[k+1 : k+semi]
			var r rune
			switch string(ent) {
			case "lt":
				r = '<'
			case "gt":
				r = '>'
			case "amp":
				r = '&'
			case "apos":
				r = '\''
			case "quot":
				r = '"'
			default:
				var err error
				if r, err = charRef(ent); err != nil {
					return nil, err
				}
			}
			out = utf8.AppendRune(out, r)
			k += semi + 1
		case c == ']' && bytes.HasPrefix(raw[k:], []byte("]]>")):
			return nil, errors.New("unescaped ]]> not in CDATA section")
		case c == '\r':
			out = append(out, '\n')
			k++
			if k < len(raw) && raw[k] == '\n' {
				k++
			}
		case c < 0x20 && c != '\t' && c != '\n':
			return nil, fmt.Errorf("illegal character code %U", rune(c))
		case c < utf8.RuneSelf:
			out = append(out, c)
			k++
		default:
			r, n := utf8.DecodeRune(raw[k:])
			if r == utf8.RuneError && n == 1 {
				return nil, errors.New("invalid UTF-8")
			}
			if !inRange(r) {
				return nil, fmt.Errorf("illegal character code %U", r)
			}
			out = append(out, raw[k:k+n]...)
			k += n
		}
	}
	return out, nil
}

// nameEnd are the bytes that end a name.
var nameEnd = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r>/=<\"'&?!") {
		t[c] = true
	}
	return t
}()

// special are the bytes text's fast path leaves to its slow one.
var special = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c >= utf8.RuneSelf || c == '&' || c == ']'
	}
	return t
}()

// charRef decodes the body of a character reference: "#123" or "#x7b".
func charRef(ent []byte) (rune, error) {
	if len(ent) < 2 || ent[0] != '#' {
		return 0, fmt.Errorf("invalid character entity &%s;", clip(ent))
	}
	base, digits := 10, ent[1:]
	if digits[0] == 'x' {
		base, digits = 16, digits[1:]
	}
	if len(digits) == 0 || len(digits) > 8 {
		return 0, fmt.Errorf("invalid character entity &%s;", clip(ent))
	}
	var n uint64
	for _, c := range digits {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case base == 16 && c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case base == 16 && c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, fmt.Errorf("invalid character entity &%s;", clip(ent))
		}
		n = n*uint64(base) + uint64(v)
	}
	if n > utf8.MaxRune || !inRange(rune(n)) {
		return 0, fmt.Errorf("invalid character entity &%s;", clip(ent))
	}
	return rune(n), nil
}

// inRange is XML's Char production, as encoding/xml checks it.
func inRange(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// clip shortens a name for an error message.
func clip(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return strconv.Quote(string(b))[1 : len(strconv.Quote(string(b)))-1]
}

// result reads the content of the root element.
func (s *scanner) result(p *Page, root []byte) error {
	return s.children(root, func(name []byte, empty bool) error {
		switch fieldOf(name) {
		case fContents:
			o, err := s.object(name, empty)
			if err != nil {
				return err
			}
			if p.Contents == nil && s.d.reuse {
				p.Contents = s.d.objs[:0]
			}
			if p.Contents == nil && p.KeyCount > 0 {
				p.Contents = make([]Object, 0, min(p.KeyCount, 1000))
			}
			p.Contents = append(p.Contents, o)
		case fCommonPrefixes:
			var prefix string
			found := false
			err := s.elements(name, empty, func(c []byte, e bool) error {
				if fieldOf(c) != fPrefix {
					return s.skip(c, e)
				}
				v, err := s.value(c, e)
				prefix, found = string(v), true
				return err
			})
			if err != nil {
				return err
			}
			if !found {
				return errors.New("<CommonPrefixes> without <Prefix>")
			}
			p.CommonPrefixes = append(p.CommonPrefixes, prefix)
		case fIsTruncated:
			raw, err := s.value(name, empty)
			if err != nil {
				return err
			}
			if empty {
				return nil // the SDK leaves it unset
			}
			b, err := parseBool(raw)
			if err != nil {
				return err
			}
			p.IsTruncated = b
		case fNextContinuationToken:
			v, err := s.value(name, empty)
			p.NextContinuationToken, p.HasNext = string(v), true
			return err
		case fKeyCount:
			raw, err := s.value(name, empty)
			if err != nil {
				return err
			}
			if empty {
				return nil
			}
			n, err := parseInt(raw)
			if err != nil {
				return fmt.Errorf("<KeyCount>: %w", err)
			}
			p.KeyCount = int64(int32(n)) // as the SDK keeps it
		case fEncodingType:
			v, err := s.value(name, empty)
			p.EncodingType = string(v)
			return err
		default:
			return s.skip(name, empty)
		}
		return nil
	})
}

// elements reads the children of a structure element.
func (s *scanner) elements(name []byte, empty bool, f func([]byte, bool) error) error {
	if empty {
		return nil
	}
	return s.children(name, f)
}

// object reads one <Contents>: Key, Size and LastModified must be there.
func (s *scanner) object(name []byte, empty bool) (Object, error) {
	var (
		o                 Object
		key, size, modded bool
	)
	err := s.elements(name, empty, func(c []byte, e bool) error {
		switch fieldOf(c) {
		case fKey:
			v, err := s.value(c, e)
			o.Key, key = string(v), true
			return err
		case fSize:
			raw, err := s.value(c, e)
			if err != nil {
				return err
			}
			if e {
				return errors.New("empty <Size>")
			}
			if o.Size, err = parseInt(raw); err != nil {
				return fmt.Errorf("<Size>: %w", err)
			}
			size = true
		case fLastModified:
			raw, err := s.value(c, e)
			if err != nil {
				return err
			}
			if e {
				return errors.New("empty <LastModified>")
			}
			if o.LastModified, err = s.d.parseTime(raw); err != nil {
				return err
			}
			modded = true
		case fETag:
			v, err := s.value(c, e)
			o.ETag = string(v)
			return err
		default:
			return s.skip(c, e)
		}
		return nil
	})
	switch {
	case err != nil:
		return o, err
	case !key:
		return o, errors.New("<Contents> without <Key>")
	case !size:
		return o, fmt.Errorf("<Contents> of %q without <Size>", o.Key)
	case !modded:
		return o, fmt.Errorf("<Contents> of %q without <LastModified>", o.Key)
	}
	return o, nil
}

// parseBool is strconv.ParseBool, which the SDK uses, without a string.
func parseBool(raw []byte) (bool, error) {
	switch string(raw) {
	case "1", "t", "T", "TRUE", "true", "True":
		return true, nil
	case "0", "f", "F", "FALSE", "false", "False":
		return false, nil
	}
	return false, fmt.Errorf("IsTruncated %q is no boolean", clip(raw))
}

// parseInt is strconv.ParseInt(raw, 10, 64), as the SDK parses numbers,
// fast for plain digits.
func parseInt(raw []byte) (int64, error) {
	if len(raw) > 0 && len(raw) <= 18 {
		var n int64
		for _, c := range raw {
			if c < '0' || c > '9' {
				goto slow
			}
			n = n*10 + int64(c-'0')
		}
		return n, nil
	}
slow:
	return strconv.ParseInt(string(raw), 10, 64)
}

// parseTime parses a timestamp as the SDK does (smithy's ParseDateTime),
// fast for S3's own form, 2006-01-02T15:04:05.000Z.
func (d *Decoder) parseTime(raw []byte) (time.Time, error) {
	if t, ok := d.fastTime(raw); ok {
		return t, nil
	}
	t, err := smithytime.ParseDateTime(string(raw))
	if err != nil {
		return time.Time{}, fmt.Errorf("<LastModified>: %w", err)
	}
	return t, nil
}

func (d *Decoder) fastTime(b []byte) (time.Time, bool) {
	if len(b) != 20 && len(b) != 24 || b[len(b)-1] != 'Z' ||
		b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec := num(11, 2), num(14, 2), num(17, 2)
	ms := 0
	if len(b) == 24 {
		if b[19] != '.' {
			return time.Time{}, false
		}
		ms = num(20, 3)
	}
	if year < 0 || month < 1 || month > 12 || day < 1 || day > 28 && day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	// A page's objects often share a day: reuse its midnight.
	if d.day.IsZero() || d.dayKey != [3]int{year, month, day} {
		d.day, d.dayKey = time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC), [3]int{year, month, day}
	}
	return d.day.Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute +
		time.Duration(sec)*time.Second + time.Duration(ms)*time.Millisecond), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
