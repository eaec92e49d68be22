package linkaddr

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lakegc/lakegc/internal/contract"
)

// Delimiter separates the address from its signature in a signed address.
const Delimiter = ","

// DefaultTTL is how long a signed address stays valid unless WithTTL says
// otherwise. It is lakeFS's.
const DefaultTTL = 24 * time.Hour

// StagingMargin is the time Verify leaves a host to stage a link: it refuses
// an address with less than StagingMargin left of its TTL, and the deadline
// it returns is at least StagingMargin away. Package sweep keeps the same
// margin on top of its clock skew (sweep.StagingMargin is the same
// constant), so an object whose link was verified with the whole TTL, as
// lakeFS's link does, also survives a staging write that lands up to
// StagingMargin after the TTL. See "Staging in time" in the package
// documentation.
const StagingMargin = contract.StagingMargin

// maxSkew is how far in the future an address's time may be: clocks of the
// machines that made and that verify an address differ a little.
const maxSkew = time.Minute

// Errors of Verify and VerifyOnce. Every rejection wraps exactly one of them,
// behind the package's name and the call's ("linkaddr: verify: link address
// invalid: ...").
var (
	// ErrInvalid is wrapped when a signed address is malformed, forged,
	// signed for another repository, branch or path, of unknown or future
	// time, or already redeemed, and when a repository, branch, path or
	// address is not valid UTF-8 (by Sign too).
	ErrInvalid = errors.New("link address invalid")
	// ErrExpired is wrapped when an address has less than StagingMargin
	// left of its TTL, and by Stage when a staging write would land, or
	// landed, after the link's deadline.
	ErrExpired = errors.New("link address expired")
)

// TimeResolver tells when an address was made. pathprovider.Provider
// implements it: the time is read from the address itself.
type TimeResolver interface {
	ResolvePathTime(address string) (time.Time, error)
}

// ErrInvalidInput is wrapped by the error of New for an empty key, a nil
// resolver, a nil option or an option given an invalid value.
var ErrInvalidInput = errors.New("linkaddr: invalid input")

// Option configures New. An option given an invalid value makes New fail
// with an error wrapping ErrInvalidInput.
type Option func(*config) error

type config struct {
	ttl        time.Duration
	now        func() time.Time
	verifyKeys [][]byte
}

// WithTTL sets how long after its address was made a signed address is
// accepted, staging margin included (0: the default DefaultTTL; negative,
// or not longer than StagingMargin: invalid). A garbage collector must not
// delete objects younger than this TTL, so hosts pass the same value to it
// (lakegc.Config.LinkTTL, or lakegc.Config.Signer).
func WithTTL(d time.Duration) Option {
	return func(c *config) error {
		switch {
		case d < 0:
			return fmt.Errorf("negative TTL %v", d)
		case d > 0 && d <= StagingMargin:
			return fmt.Errorf("TTL %v not longer than the staging margin %v: no address would verify", d, StagingMargin)
		case d == 0:
			c.ttl = DefaultTTL
		default:
			c.ttl = d
		}
		return nil
	}
}

// WithClock sets the clock Verify judges expiry by (nil: the default
// time.Now). It is called concurrently by concurrent Verify calls.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			now = time.Now
		}
		c.now = now
		return nil
	}
}

// WithVerifyKeys adds keys that Verify still accepts but Sign no longer uses:
// to rotate keys, sign with the new key and verify with the old ones until
// the addresses they signed have expired. Each key must be non-empty.
func WithVerifyKeys(keys ...[]byte) Option {
	return func(c *config) error {
		for i, k := range keys {
			if len(k) == 0 {
				return fmt.Errorf("verify key %d is empty", i)
			}
			c.verifyKeys = append(c.verifyKeys, k)
		}
		return nil
	}
}

// Signer signs physical addresses handed out for an upload and verifies them
// when the upload is linked. It is safe for concurrent use. The zero value is
// not usable: call New.
type Signer struct {
	resolver TimeResolver
	ttl      time.Duration
	now      func() time.Time
	keys     []*macKey // keys[0] signs; all of them verify
}

// New returns a Signer that signs with key and reads addresses' times with
// resolver. The key must not be empty; the Signer keeps its own copy.
func New(key []byte, resolver TimeResolver, opts ...Option) (*Signer, error) {
	if len(key) == 0 {
		return nil, fmt.Errorf("%w: empty key", ErrInvalidInput)
	}
	if resolver == nil {
		return nil, fmt.Errorf("%w: nil time resolver", ErrInvalidInput)
	}
	cfg := config{ttl: DefaultTTL, now: time.Now}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidInput)
		}
		if err := opt(&cfg); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
		}
	}
	s := &Signer{resolver: resolver, ttl: cfg.ttl, now: cfg.now, keys: []*macKey{newMACKey(key)}}
	for _, k := range cfg.verifyKeys {
		s.keys = append(s.keys, newMACKey(k))
	}
	return s, nil
}

// Sign returns address + Delimiter + signature, where the signature binds the
// address to repository, branch and path (lakeFS's format: see the package
// documentation).
//
// The four strings must be valid UTF-8 (see "Inputs must be UTF-8" in the
// package documentation): Sign refuses a repository, branch, path or address
// that is not with an error wrapping ErrInvalid, and returns "".
func (s *Signer) Sign(repository, branch, path, address string) (string, error) {
	if err := checkUTF8(repository, branch, path, address); err != nil {
		return "", fmt.Errorf("linkaddr: sign: %w", err)
	}
	var mac [sha256.Size]byte
	s.keys[0].mac(&mac, repository, branch, path, address)
	var sig [sigLen]byte
	base64.RawURLEncoding.Encode(sig[:], mac[:])
	var b strings.Builder
	b.Grow(len(address) + len(Delimiter) + sigLen)
	b.WriteString(address)
	b.WriteString(Delimiter)
	b.Write(sig[:])
	return b.String(), nil
}

// checkUTF8 returns an error wrapping ErrInvalid naming the first of the
// payload's strings that is not valid UTF-8. encoding/json writes each
// invalid byte as U+FFFD, so two such strings can share a payload, and a
// signature made for one would hold for the other.
func checkUTF8(repository, branch, path, address string) error {
	for _, f := range [...]struct{ name, value string }{
		{"repository", repository}, {"branch", branch}, {"path", path}, {"address", address},
	} {
		if !utf8.ValidString(f.value) {
			return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, f.name)
		}
	}
	return nil
}

// TTL returns the Signer's TTL: how long after its address was made a
// signed address can be linked, staging margin included. A garbage
// collector must spare objects younger than this (lakegc.Config.Signer
// checks it).
func (s *Signer) TTL() time.Duration { return s.ttl }

// Link is a signed address that passed Verify, and the deadline of its
// staging write.
type Link struct {
	// Address is the physical address, without its signature.
	Address string
	// Deadline is when the address's TTL runs out, on the Signer's clock,
	// at least StagingMargin after the verification: the host's staging
	// write of the link must have landed by then, or the garbage collector
	// may have deleted the object. Stage checks it.
	Deadline time.Time
}

// sigLen is the length of an encoded signature: 32 bytes in unpadded base64.
const sigLen = (sha256.Size*8 + 5) / 6

// Verify checks that signed was made by Sign (with the signing key or a verify
// key) for this repository, branch and path, and that its address has at
// least StagingMargin left of its TTL, and returns the address and the
// deadline of its staging write. Rejections wrap ErrInvalid, or ErrExpired
// for an address made more than the TTL less StagingMargin ago.
func (s *Signer) Verify(repository, branch, path, signed string) (Link, error) {
	l, _, err := s.verify(repository, branch, path, signed)
	if err != nil {
		return Link{}, fmt.Errorf("linkaddr: verify: %w", err)
	}
	return l, nil
}

// verify is Verify that also returns how long the address stays valid.
func (s *Signer) verify(repository, branch, path, signed string) (l Link, remaining time.Duration, err error) {
	address, _, got, err := split(signed)
	if err != nil {
		return Link{}, 0, err
	}
	if err := checkUTF8(repository, branch, path, address); err != nil {
		return Link{}, 0, err
	}
	if !s.anyKeyMatches(&got, repository, branch, path, address) {
		return Link{}, 0, fmt.Errorf("%w: signature does not match the address, repository, branch and path", ErrInvalid)
	}

	made, err := s.resolver.ResolvePathTime(address)
	if err != nil {
		return Link{}, 0, fmt.Errorf("%w: cannot tell when the address was made: %w", ErrInvalid, err)
	}
	now := s.now()
	if made.After(now.Add(maxSkew)) {
		return Link{}, 0, fmt.Errorf("%w: address made at %v, in the future", ErrInvalid, made.UTC())
	}
	deadline := made.Add(s.ttl)
	if now.After(deadline.Add(-StagingMargin)) {
		return Link{}, 0, fmt.Errorf("%w: address made at %v, and less than the staging margin %v is left of its TTL %v",
			ErrExpired, made.UTC(), StagingMargin, s.ttl)
	}
	return Link{Address: address, Deadline: deadline}, deadline.Sub(now), nil
}

var strictBase64 = base64.RawURLEncoding.Strict()

// Split splits a signed address into its address and its signature, at the
// last Delimiter, as Verify does. ok is false when signed has no Delimiter
// or what follows it is not a signature in the form Sign and lakeFS write:
// 43 characters of unpadded base64url, in canonical spelling. Split does not
// verify the signature; Verify does.
//
// It is for readers of stored addresses: lakeFS stores a linked object under
// the signed address the client uploaded to (pathprovider.Parse reads such
// an address too).
func Split(signed string) (address, signature string, ok bool) {
	address, signature, _, err := split(signed)
	if err != nil {
		return "", "", false
	}
	return address, signature, true
}

// split splits signed at the last Delimiter and decodes the signature. Only
// the canonical encoding is accepted: strict decoding refuses non-zero
// padding bits, and the exact length refuses the CR and LF the decoder would
// skip, so each signature has one spelling. Errors wrap ErrInvalid.
func split(signed string) (address, encoded string, mac [sha256.Size]byte, err error) {
	i := strings.LastIndex(signed, Delimiter)
	if i < 0 {
		return "", "", mac, fmt.Errorf("%w: no %q delimiter", ErrInvalid, Delimiter)
	}
	address, encoded = signed[:i], signed[i+len(Delimiter):]
	if len(encoded) != sigLen {
		return "", "", mac, fmt.Errorf("%w: signature of %d characters, want %d", ErrInvalid, len(encoded), sigLen)
	}
	var sig [sigLen]byte
	copy(sig[:], encoded)
	if n, err := strictBase64.Decode(mac[:], sig[:]); err != nil || n != len(mac) {
		return "", "", mac, fmt.Errorf("%w: signature is not base64url", ErrInvalid)
	}
	return address, encoded, mac, nil
}

// anyKeyMatches reports whether the MAC of the payload under one of the keys
// equals got, comparing in constant time.
func (s *Signer) anyKeyMatches(got *[sha256.Size]byte, repository, branch, path, address string) bool {
	var want [sha256.Size]byte
	for _, k := range s.keys {
		k.mac(&want, repository, branch, path, address)
		if hmac.Equal(want[:], got[:]) {
			return true
		}
	}
	return false
}

// macKey computes HMAC-SHA256 with one key. It pools hash states and payload
// buffers, so a MAC allocates nothing.
type macKey struct {
	pool sync.Pool // of *macState
}

type macState struct {
	h   hash.Hash
	buf []byte
	out [sha256.Size]byte
}

// maxPooledPayload bounds the buffers kept for reuse: a rare huge path does
// not pin its buffer in the pool.
const maxPooledPayload = 4 << 10

func newMACKey(key []byte) *macKey {
	key = append([]byte(nil), key...)
	m := &macKey{}
	m.pool.New = func() any { return &macState{h: hmac.New(sha256.New, key)} }
	return m
}

// mac sets out to the MAC of the payload of repository, branch, path and
// address.
func (m *macKey) mac(out *[sha256.Size]byte, repository, branch, path, address string) {
	st := m.pool.Get().(*macState)
	st.buf = appendPayload(st.buf[:0], repository, branch, path, address)
	st.h.Reset()
	st.h.Write(st.buf)
	st.h.Sum(st.out[:0])
	*out = st.out
	if cap(st.buf) > maxPooledPayload {
		st.buf = nil
	}
	m.pool.Put(st)
}
