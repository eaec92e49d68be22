package inventory

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxLine bounds a row of a CSV file, in bytes: a key is at most 1 KiB on
// S3 (3 KiB URL-encoded), and a row has a few dozen short fields.
const maxLine = 64 << 10

// csvLayout says where a CSV row's fields are. A column absent from the
// report is -1.
type csvLayout struct {
	columns        int
	bucket, key    int
	size, modified int
	latest, marker int // S3's IsLatest and IsDeleteMarker; Azure's IsCurrentVersion and Deleted
	snapshot       int // Azure's Snapshot: a row with one is no current object
	urlKeys        bool
	gzip           bool // the files are gzip-compressed (S3's)
	header         bool // each file's first row names its columns (Azure's, GCS's)
	gcsHeader      bool // with GCS's metadata field names
}

// s3CSVLayout reads the columns of a CSV report from its manifest's
// fileSchema ("Bucket, Key, Size, LastModifiedDate, ...").
func s3CSVLayout(schema string) (csvLayout, error) {
	l := csvLayout{bucket: -1, key: -1, size: -1, modified: -1, latest: -1, marker: -1, snapshot: -1, urlKeys: true, gzip: true}
	names := strings.Split(schema, ",")
	l.columns = len(names)
	for i, name := range names {
		var at *int
		switch strings.TrimSpace(name) {
		case "Bucket":
			at = &l.bucket
		case "Key":
			at = &l.key
		case "Size":
			at = &l.size
		case "LastModifiedDate":
			at = &l.modified
		case "IsLatest":
			at = &l.latest
		case "IsDeleteMarker":
			at = &l.marker
		default:
			continue
		}
		if *at >= 0 {
			return l, fmt.Errorf("%w: file schema names %q twice", ErrInvalidInput, strings.TrimSpace(name))
		}
		*at = i
	}
	if l.bucket < 0 || l.key < 0 || l.size < 0 || l.modified < 0 {
		return l, fmt.Errorf("%w: file schema %q lacks Bucket, Key, Size or LastModifiedDate", ErrInvalidInput, schema)
	}
	return l, nil
}

// readCSVFile yields the objects of one CSV file of a report, gzip-compressed
// or not as its layout says; false when it yielded an error or the consumer
// stopped.
func readCSVFile(ctx context.Context, r *Report, f reportFile, rows *int64, yield func(Object, error) bool) bool {
	var cr *checkedReader
	fail := func(err error) bool {
		// A file that does not decode is, first, a file that is not the
		// manifest's, when it is not: say so.
		if cr != nil && errors.Is(err, ErrInvalidInput) && !errors.Is(err, ErrChecksum) {
			if cerr := cr.finish(); errors.Is(cerr, ErrChecksum) {
				err = cerr
			}
		}
		yield(Object{}, err)
		return false
	}
	cr, err := r.openFile(ctx, f)
	if err != nil {
		cr = nil
		return fail(err)
	}
	defer cr.Close()
	var body io.Reader = cr
	if r.csv.gzip {
		zr, err := gzip.NewReader(bufio.NewReaderSize(cr, 64<<10))
		if err != nil {
			if errors.Is(err, ErrInvalidInput) {
				return fail(err)
			}
			return fail(fmt.Errorf("%w: %s: gzip: %v", ErrInvalidInput, f.key, err))
		}
		body = zr
	}
	lines := newLineReader(body)
	lines.keepCR = r.csv.gcsHeader
	var row csvRow
	layout := &r.csv
	if layout.header {
		line, err := lines.next()
		if err == io.EOF {
			return fail(fmt.Errorf("%w: %s: no header row", ErrInvalidInput, f.key))
		}
		if err == nil {
			var l csvLayout
			parse := azureCSVLayout
			if layout.gcsHeader {
				parse = gcsCSVLayout
			}
			if l, err = parse(line, &row); err == nil {
				layout = &l
			}
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				err = fmt.Errorf("%w: %s: header: %v", ErrInvalidInput, f.key, err)
			}
			return fail(err)
		}
	}
	for n := 1; ; n++ {
		line, err := lines.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				err = fmt.Errorf("%w: %s: %v", ErrInvalidInput, f.key, err)
			}
			return fail(err)
		}
		*rows++
		o, ok, err := row.decode(line, layout, r.srcBucket)
		if err != nil {
			return fail(fmt.Errorf("%w: %s: row %d: %v", ErrInvalidInput, f.key, n, err))
		}
		if !ok {
			continue
		}
		if o.Key, ok = r.relative(o.Key); !ok {
			continue
		}
		if !yield(o, nil) {
			return false
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return fail(ctx.Err())
		}
	}
	if err := cr.finish(); err != nil {
		return fail(err)
	}
	return true
}

// lineReader reads lines of at most maxLine bytes, with or without a final
// newline; a '\r' before the newline is dropped, unless keepCR.
type lineReader struct {
	br  *bufio.Reader
	buf []byte
	// keepCR keeps a '\r' before the newline: a report whose record
	// separator is "\n" alone (GCS's) may end its last field, a bare name
	// among them, with a '\r' of its own, which dropped would name
	// another object.
	keepCR bool
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line, valid until the next call; io.EOF at the end.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		part, err := l.br.ReadSlice('\n')
		if len(l.buf)+len(part) > maxLine+1 {
			return nil, fmt.Errorf("a line over %d bytes", maxLine)
		}
		switch err {
		case nil:
			line := part
			if len(l.buf) > 0 {
				l.buf = append(l.buf, part...)
				line = l.buf
			}
			return l.trim(line[:len(line)-1]), nil
		case bufio.ErrBufferFull:
			l.buf = append(l.buf, part...)
		case io.EOF:
			l.buf = append(l.buf, part...)
			if len(l.buf) == 0 {
				return nil, io.EOF
			}
			return l.trim(l.buf), nil
		default:
			return nil, err
		}
	}
}

// trim drops the '\r' that ends line, unless keepCR.
func (l *lineReader) trim(line []byte) []byte {
	if l.keepCR {
		return line
	}
	return bytes.TrimSuffix(line, []byte{'\r'})
}

// csvRow decodes rows, reusing its buffers.
type csvRow struct {
	fields  [][]byte
	scratch []byte
}

// decode decodes one row of a report; false (and no error) for a row that
// is no current object: a noncurrent version or a delete marker.
func (c *csvRow) decode(line []byte, l *csvLayout, bucket string) (Object, bool, error) {
	var err error
	if c.fields, c.scratch, err = splitCSV(line, c.fields[:0], c.scratch[:0]); err != nil {
		return Object{}, false, err
	}
	if len(c.fields) != l.columns {
		return Object{}, false, fmt.Errorf("%d fields, the schema has %d", len(c.fields), l.columns)
	}
	if l.bucket >= 0 && string(c.fields[l.bucket]) != bucket {
		return Object{}, false, fmt.Errorf("bucket %q, not %q", c.fields[l.bucket], bucket)
	}
	if l.latest >= 0 {
		latest, err := parseBool(c.fields[l.latest])
		if err != nil {
			return Object{}, false, err
		}
		if !latest {
			return Object{}, false, nil
		}
	}
	if l.marker >= 0 {
		marker, err := parseBool(c.fields[l.marker])
		if err != nil {
			return Object{}, false, err
		}
		if marker {
			return Object{}, false, nil
		}
	}
	if l.snapshot >= 0 && len(c.fields[l.snapshot]) > 0 {
		return Object{}, false, nil
	}
	var o Object
	raw := c.fields[l.key]
	if l.urlKeys {
		if o.Key, err = decodeKey(raw); err != nil {
			return Object{}, false, err
		}
	} else {
		o.Key = string(raw)
	}
	if o.Key == "" {
		return Object{}, false, errors.New("empty key")
	}
	if o.Size, err = strconv.ParseInt(string(c.fields[l.size]), 10, 64); err != nil || o.Size < 0 {
		return Object{}, false, fmt.Errorf("size %q", c.fields[l.size])
	}
	if o.ModTime, err = parseModTime(c.fields[l.modified]); err != nil {
		return Object{}, false, err
	}
	return o, true, nil
}

// parseBool reads S3's "true" and "false" (an empty field is false).
func parseBool(b []byte) (bool, error) {
	switch string(b) {
	case "true", "TRUE", "True":
		return true, nil
	case "false", "FALSE", "False", "":
		return false, nil
	}
	return false, fmt.Errorf("boolean %q", b)
}

// parseModTime reads a last-modified time in RFC 3339 (S3's
// "2006-01-02T15:04:05.000Z") or as HTTP dates are written ("Mon, 02 Jan
// 2006 15:04:05 GMT"); an empty field is an unknown time.
func parseModTime(b []byte) (time.Time, error) {
	if len(b) == 0 {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		if t, err = time.Parse(http.TimeFormat, string(b)); err != nil {
			return time.Time{}, fmt.Errorf("last modified %q", b)
		}
	}
	if y := t.Year(); y < 1970 || y > 9999 {
		return time.Time{}, fmt.Errorf("last modified %q out of range", b)
	}
	return t.UTC(), nil
}

// splitCSV splits a line of RFC 4180 CSV into fields: a field is bare or
// quoted, a quote inside a quoted field is doubled. The fields are slices
// of line, or of scratch for quoted fields with doubled quotes.
func splitCSV(line []byte, fields [][]byte, scratch []byte) ([][]byte, []byte, error) {
	// scratch must not move while fields point into it: room for the
	// whole line.
	if cap(scratch) < len(line) {
		scratch = make([]byte, 0, len(line))
	}
	for i := 0; ; {
		if i < len(line) && line[i] == '"' {
			i++
			start := len(scratch)
			for {
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					return fields, scratch, errors.New("unterminated quoted field")
				}
				scratch = append(scratch, line[i:i+j]...)
				i += j + 1
				if i < len(line) && line[i] == '"' {
					scratch = append(scratch, '"')
					i++
					continue
				}
				break
			}
			fields = append(fields, scratch[start:len(scratch):len(scratch)])
		} else {
			j := bytes.IndexByte(line[i:], ',')
			if j < 0 {
				j = len(line) - i
			}
			f := line[i : i+j]
			if bytes.IndexByte(f, '"') >= 0 {
				return fields, scratch, errors.New("a quote in a bare field")
			}
			fields = append(fields, f)
			i += j
		}
		if i == len(line) {
			return fields, scratch, nil
		}
		if line[i] != ',' {
			return fields, scratch, errors.New("text after a quoted field")
		}
		i++
	}
}

// decodeKey decodes a key as S3 Inventory's CSV encodes it: URL encoding
// as in an HTML form, a space as '+', every byte but letters, digits and
// a few marks as %XX (so a '+' of the key is "%2B"). A '%' not followed by
// two hexadecimal digits is an error; any other byte stands for itself.
func decodeKey(b []byte) (string, error) {
	if bytes.IndexByte(b, '%') < 0 && bytes.IndexByte(b, '+') < 0 {
		return string(b), nil
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(b) {
				return "", fmt.Errorf("key %q: a cut %%-escape", b)
			}
			hi, ok1 := unhex(b[i+1])
			lo, ok2 := unhex(b[i+2])
			if !ok1 || !ok2 {
				return "", fmt.Errorf("key %q: %%-escape %q", b, b[i:i+3])
			}
			out = append(out, hi<<4|lo)
			i += 2
		default:
			out = append(out, c)
		}
	}
	return string(out), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
