package s3sim

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"gocloud.dev/blob/driver"
)

// A page token is a flag and the last entry of its page, as S3's
// continuation: the next page starts after that key (tokenAfter) or after
// every key under that folder (tokenAfterDir), so that a key written
// between the pages after the last one listed is listed next.
const (
	tokenAfter    = 'a'
	tokenAfterDir = 'd'
)

// ListPaged lists a page of at most MaxKeys entries (fewer if the caller
// asks), generating the synthesised keys in order from the page token.
func (b *bucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	if err := b.s.request(ctx, kList, opts.Prefix); err != nil {
		return nil, err
	}
	if opts.BeforeList != nil {
		if err := opts.BeforeList(func(any) bool { return false }); err != nil {
			return nil, err
		}
	}
	size := opts.PageSize
	if size <= 0 || size > MaxKeys {
		size = MaxKeys
	}
	from, after := opts.Prefix, false
	if tok := opts.PageToken; len(tok) > 0 {
		last := string(tok[1:])
		switch tok[0] {
		case tokenAfter:
		case tokenAfterDir:
			next, ok := successor(last)
			if !ok {
				return &driver.ListPage{}, nil
			}
			last = next
		default:
			return nil, fmt.Errorf("%w: page token %q", ErrInvalid, tok)
		}
		if last >= from {
			from, after = last, tok[0] == tokenAfter
		}
	}
	b.s.mu.RLock()
	defer b.s.mu.RUnlock()
	c := &cursor{s: b.s}
	c.seek(from, after)
	page := &driver.ListPage{}
	for {
		key, obj, ok := c.peek()
		if !ok || !strings.HasPrefix(key, opts.Prefix) {
			return page, nil
		}
		if n := len(page.Objects); n == size {
			flag := byte(tokenAfter)
			if page.Objects[n-1].IsDir {
				flag = tokenAfterDir
			}
			page.NextPageToken = append([]byte{flag}, page.Objects[n-1].Key...)
			return page, nil
		}
		if opts.Delimiter != "" {
			if i := strings.Index(key[len(opts.Prefix):], opts.Delimiter); i >= 0 {
				dir := key[:len(opts.Prefix)+i+len(opts.Delimiter)]
				page.Objects = append(page.Objects, &driver.ListObject{Key: dir, IsDir: true})
				next, ok := successor(dir)
				if !ok {
					return page, nil
				}
				c.seek(next, false)
				continue
			}
		}
		page.Objects = append(page.Objects, obj())
		c.advance()
	}
}

// successor returns the least string greater than every string that starts
// with p; false if there is none (p is all 0xff).
func successor(p string) (string, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			return p[:i] + string([]byte{p[i] + 1}), true
		}
	}
	return "", false
}

// cursor walks the store's keys in order: the overlay's and the live
// synthesised ones, which never share a key (writing a synthesised key
// makes it gone). The store's lock must be held.
type cursor struct {
	s  *Store
	oi int // next overlay key
	j  int // current slice
	i  int // its next live object
	sk string
}

// seek moves to the first key >= k (> k when after).
func (c *cursor) seek(k string, after bool) {
	keys := c.s.okeys
	c.oi = sort.Search(len(keys), func(i int) bool { return keys[i] > k || keys[i] == k && !after })
	ss := c.s.slices
	c.j = sort.Search(len(ss), func(j int) bool { return ss[j].last > k || ss[j].last == k && !after })
	c.i = 0
	if c.j < len(ss) && ss[c.j].first <= k {
		c.i = ss[c.j].search(k, after)
	}
	c.settle()
}

// settle moves the slice position to a live object, the next slice's if
// need be, and generates its key.
func (c *cursor) settle() {
	for c.j < len(c.s.slices) {
		sl := c.s.slices[c.j]
		if c.i = sl.nextLive(c.i); c.i < sl.Count {
			c.sk = sl.key(c.i)
			return
		}
		c.j, c.i = c.j+1, 0
	}
	c.sk = ""
}

// peek returns the current key and a function that makes its entry.
func (c *cursor) peek() (string, func() *driver.ListObject, bool) {
	haveO, haveS := c.oi < len(c.s.okeys), c.j < len(c.s.slices)
	switch {
	case haveO && (!haveS || c.s.okeys[c.oi] <= c.sk):
		k := c.s.okeys[c.oi]
		return k, func() *driver.ListObject {
			a := c.s.overlay[k].attrs
			return &driver.ListObject{Key: k, ModTime: a.ModTime, Size: a.Size, MD5: a.MD5}
		}, true
	case haveS:
		sl, k := c.s.slices[c.j], c.sk
		return k, func() *driver.ListObject {
			return &driver.ListObject{Key: k, ModTime: sl.ModTime, Size: sl.Size, MD5: sl.md5}
		}, true
	}
	return "", nil, false
}

// advance moves past the current key (in both sources, should they hold
// it).
func (c *cursor) advance() {
	haveS := c.j < len(c.s.slices)
	if c.oi < len(c.s.okeys) && (!haveS || c.s.okeys[c.oi] <= c.sk) {
		if c.oi++; !haveS || c.s.okeys[c.oi-1] < c.sk {
			return
		}
	}
	c.i++
	c.settle()
}
